"""Assembles every kernel brt-compile generated into the given executables
with ptxas, for each GPU architecture the CUDA provider is built for, so
that PTX the driver would refuse at load fails here, where no GPU is needed.
Prints each kernel's registers and stack (a stack frame is local memory) and
exits 1 if any kernel does not assemble.

  python3 tests/ptx_check.py [--ptxas PATH] [--flatc PATH] [--arch sm_80,sm_90] EXECUTABLE_OR_DIR...

A directory stands for every .brtx under it. flatc reads the executables
(schema/brt.fbs), so this needs no part of brt itself."""
import argparse
import json
import pathlib
import re
import subprocess
import sys
import tempfile

SCHEMA = pathlib.Path(__file__).resolve().parent.parent / "schema" / "brt.fbs"


def kernels(path, flatc, tmp):
    """(name, target, PTX text) of each generated kernel in the executable."""
    out = pathlib.Path(tempfile.mkdtemp(dir=tmp))
    subprocess.run([flatc, "--json", "--raw-binary", "--size-prefixed", "--strict-json", "-o",
                    str(out), str(SCHEMA), "--", str(path)], check=True, capture_output=True)
    text = next(out.glob("*.json")).read_text()
    # flatc writes non-finite float attributes as bare nan / inf, which JSON lacks.
    text = re.sub(r"(?<=[\s\[,:])-?(?:nan|inf)(?=[\s,\]])", "null", text)
    for k in json.loads(text).get("kernels", []):
        yield k["name"], k.get("target", ""), bytes(k["image"]).rstrip(b"\0").decode()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ptxas", default="ptxas")
    ap.add_argument("--flatc", default="flatc")
    ap.add_argument("--arch", default="sm_80,sm_90")
    ap.add_argument("paths", nargs="+", type=pathlib.Path)
    opts = ap.parse_args()
    files = sorted(f for p in opts.paths for f in ([p] if p.is_file() else p.rglob("*.brtx")))
    failures, count, most_registers, with_stack = [], 0, 0, []
    with tempfile.TemporaryDirectory() as tmp:
        for f in files:
            for name, target, ptx in kernels(f, opts.flatc, tmp):
                if not target.startswith("ptx:"):
                    continue
                count += 1
                source = pathlib.Path(tmp) / f"{f.stem}.{name}.ptx"
                source.write_text(ptx)
                for arch in opts.arch.split(","):
                    r = subprocess.run([opts.ptxas, f"-arch={arch}", "-v", "-o", "/dev/null",
                                        str(source)], capture_output=True, text=True)
                    where = f"{f} {name} ({target}) for {arch}"
                    if r.returncode != 0:
                        failures.append(f"{where}: {r.stderr.strip()}")
                        continue
                    used = re.search(r"Used (\d+) registers", r.stderr)
                    most_registers = max(most_registers, int(used.group(1)) if used else 0)
                    stack = re.search(r"(\d+) bytes stack frame", r.stderr)
                    if stack and int(stack.group(1)) > 0:
                        with_stack.append(f"{where}: {stack.group(1)} bytes of stack")
    for line in with_stack:
        print(f"note: {line}")
    for line in failures:
        print(f"FAILED {line}")
    print(f"{count} generated kernels in {len(files)} executables, {opts.arch}: "
          f"{len(failures)} did not assemble; at most {most_registers} registers a thread")
    if count == 0:
        print("FAILED: no generated kernels found (were these compiled with --target=cuda?)")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
