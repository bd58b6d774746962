// JitHot.java - a CPU-bound Java method for the JIT tests
// (tests/e2e/jit_java.sh): JitHot.spin does arithmetic for SECONDS
// (args[0], default 3), called from a loop so HotSpot compiles it (C1 then
// C2, "long JitHot.spin(long)" in the perf map). Prints "pid=PID total=N".
public class JitHot {
    static long spin(long n) {
        long s = 0;
        for (long i = 0; i < n; i++)
            s = (s + i * 7) % 1000003;
        return s;
    }

    public static void main(String[] args) {
        double secs = args.length > 0 ? Double.parseDouble(args[0]) : 3;
        long end = System.nanoTime() + (long) (secs * 1e9);
        long total = 0;
        while (System.nanoTime() < end)
            total += spin(1000000);
        System.out.println("pid=" + ProcessHandle.current().pid() + " total=" + total);
    }
}
