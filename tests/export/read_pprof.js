// read_pprof.js - reads a gzip'd pprof profile back with the npm package
// pprof-format (a decoder perfcap did not write) and prints one JSON line:
// the sample types, the samples' value sums and the function names.
'use strict';
const fs = require('fs');
const zlib = require('zlib');
const { Profile } = require('pprof-format');

const prof = Profile.decode(zlib.gunzipSync(fs.readFileSync(process.argv[2])));
const strings = prof.stringTable.strings;
const sums = prof.sampleType.map(() => 0);
for (const s of prof.sample)
  s.value.forEach((v, i) => { sums[i] += Number(v); });
console.log(JSON.stringify({
  types: prof.sampleType.map(t => [strings[Number(t.type)], strings[Number(t.unit)]]),
  sums,
  functions: prof.function.map(f => strings[Number(f.name)]),
  locations: prof.location.length,
}));
