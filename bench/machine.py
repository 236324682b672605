"""What a CPU benchmark ran on, for bench/results/ headers, and the peak that
every GFLOP/s figure is compared with (scripts/bench.sh).

The FP32 peak is FLOPs per cycle (FMA width x 2 units x 2) x clock x
physical cores. A VM's clock is its nominal one, so the peak is given as
nominal and as an upper bound that allows 50% turbo; a figure above the
upper bound cannot be right (a timer measuring one thread of several, a
wrong FLOP count) and is flagged instead of recorded.

  python3 bench/machine.py   # prints the header lines
"""
import functools
import os
import pathlib
import re
import subprocess
import sys

TURBO_ALLOWANCE = 1.5


def _lscpu():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return {}
    return {k.strip(): v.strip() for k, v in (line.split(":", 1) for line in out.splitlines() if ":" in line)}


@functools.cache  # one machine per process: read lscpu and /proc/cpuinfo once
def describe():
    info = _lscpu()
    cpuinfo = open("/proc/cpuinfo").read()
    flags = set(re.search(r"^flags\s*:(.*)$", cpuinfo, re.M).group(1).split())
    model = re.search(r"^model name\s*:(.*)$", cpuinfo, re.M).group(1).strip()
    logical = int(info.get("CPU(s)", 1))
    threads_per_core = int(info.get("Thread(s) per core", 1))
    physical = max(1, logical // threads_per_core)
    mhz = float(info.get("CPU max MHz") or re.search(r"^cpu MHz\s*:(.*)$", cpuinfo, re.M).group(1))
    isa = [name for name, flag in (("AVX2", "avx2"), ("FMA", "fma"), ("AVX-512F", "avx512f"),
                                   ("AVX-512 BF16", "avx512_bf16"), ("AMX-BF16", "amx_bf16"))
           if flag in flags]
    lanes = 16 if "avx512f" in flags else 8 if "avx2" in flags else 4
    flops_per_cycle = lanes * 2 * (2 if "fma" in flags else 1)  # 2 FMA units
    nominal = flops_per_cycle * mhz / 1e3 * physical
    return {"model": model, "logical": logical, "physical": physical, "mhz": mhz, "isa": isa,
            "peak_gflops": nominal, "peak_upper_gflops": nominal * TURBO_ALLOWANCE}


def header_lines():
    m = describe()
    lines = [f"- machine: {m['model']}, {m['logical']} logical CPUs ({m['physical']} physical cores), "
             f"{m['mhz']:.0f} MHz",
             f"- ISA: {', '.join(m['isa']) or 'no AVX2'}; oneDNN runs: {onednn_isa()}",
             f"- FP32 peak: {m['peak_gflops']:.0f} GFLOP/s nominal, {m['peak_upper_gflops']:.0f} with turbo "
             f"allowance (figures above that are flagged, not recorded)"]
    return lines


def threading_line(threads, spinning=True, linger_us=0):
    """How the runtimes were threaded, for a result's header."""
    caps = [f"{v}={os.environ[v]}" for v in ("ONEDNN_MAX_CPU_ISA", "BRT_CPU_ISA") if v in os.environ]
    return (f"- threads per runtime: {threads} (brt: Session(threads={threads}), a oneTBB arena shared by "
            f"brt's kernels and oneDNN's, spinning {'on' if spinning else 'off'}, linger {linger_us} us; "
            f"onnxruntime: intra_op_num_threads={threads}); ISA caps: {', '.join(caps) or 'none'}")


def add_linger_option(parser):
    """--linger [US]: brt Sessions' SessionOptions::linger_microseconds."""
    parser.add_argument("--linger", type=int, nargs="?", const=200, default=0, metavar="US",
                        help="brt workers wait US microseconds (0-1000; alone: 200) for the next request "
                             "after one ends, spinning without yielding their CPU (default 0: off)")


def commit():
    """The checkout's short commit hash, for a result's header."""
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                          cwd=pathlib.Path(__file__).resolve().parent).stdout.strip()


def publish(lines, markdown=None):
    """Prints a result's lines, and writes them to `markdown` when given."""
    text = "\n".join(lines) + "\n"
    print(text)
    if markdown:
        pathlib.Path(markdown).write_text(text)


def checked_gflops(value):
    """A GFLOP/s figure as recorded: with its share of peak, or flagged."""
    m = describe()
    if value > m["peak_upper_gflops"]:
        return f"FLAGGED: {value:.0f} is above the {m['peak_upper_gflops']:.0f} GFLOP/s upper bound"
    return f"{value:.1f} GFLOP/s ({100 * value / m['peak_gflops']:.0f}% of nominal peak)"


ONEDNN_ISAS = {0x0: "default", 0x1: "sse41", 0x3: "avx", 0x7: "avx2", 0xf: "avx2_vnni", 0x1f: "avx2_vnni_2",
               0x27: "avx512_core", 0x67: "avx512_core_vnni", 0xe7: "avx512_core_bf16",
               0x1ef: "avx512_core_fp16", 0xfef: "avx512_core_amx", 0x1fef: "avx512_core_amx_fp16"}


def onednn_isa():
    """The ISA oneDNN dispatches to here (dnnl_get_effective_cpu_isa of the
    libdnnl the CPU provider loads: the one in this Python's prefix)."""
    import ctypes
    try:
        # Its oneTBB build needs these beside it and names no path to them.
        for dep in ("libtbb.so.12", "libintlc.so.5", "libimf.so"):
            if os.path.exists(f"{sys.prefix}/lib/{dep}"):
                ctypes.CDLL(f"{sys.prefix}/lib/{dep}", mode=ctypes.RTLD_GLOBAL)
        lib = ctypes.CDLL(f"{sys.prefix}/lib/libdnnl.so.3")
    except OSError:
        return "unknown (libdnnl not found)"
    code = lib.dnnl_get_effective_cpu_isa()
    return ONEDNN_ISAS.get(code, hex(code))


if __name__ == "__main__":
    print("\n".join(header_lines()))
