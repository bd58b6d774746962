// jit_hot.js - a CPU-bound named JavaScript function for the JIT tests
// (tests/e2e/jit_node.sh): hotLoop does arithmetic for SECONDS (argv,
// default 3), called from a loop so V8 compiles it (TurboFan: "JS:*hotLoop"
// in node 20's perf map). Prints "pid=PID total=N" at the end.
'use strict';
function hotLoop(n) {
  let s = 0;
  for (let i = 0; i < n; i++)
    s = (s + i * 7) % 1000003;
  return s;
}
const end = Date.now() + (Number(process.argv[2]) || 3) * 1000;
let total = 0;
while (Date.now() < end)
  total += hotLoop(1e6);
console.log('pid=' + process.pid + ' total=' + total);
