// go_hot.go - a CPU-bound Go workload for the pclntab tests: hotLoop (kept
// out of line by go:noinline) spins for SECONDS (default 2), called from
// main. Built stripped (-ldflags='-s -w') and not, by build.sh.
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

//go:noinline
func hotLoop(n int) uint64 {
	var x uint64 = 1
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		x ^= x >> 17
	}
	return x
}

func main() {
	secs := 2.0
	if len(os.Args) > 1 {
		if v, err := strconv.ParseFloat(os.Args[1], 64); err == nil {
			secs = v
		}
	}
	deadline := time.Now().Add(time.Duration(secs * float64(time.Second)))
	var acc uint64
	for time.Now().Before(deadline) {
		acc += hotLoop(1 << 20)
	}
	fmt.Println(acc)
}
