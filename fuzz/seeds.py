"""Writes the seed corpora (fuzz/seeds/<target>/) from the small logs in tests/fixtures/spec:
raw logs, DSH-layout zstd logs (the header in its own frame), ZIP exports and persistence roots,
JSON lines, URIs and mentions. Run by `make fuzz-seeds`; needs python3 and the zstd CLI."""
import base64, io, json, os, pathlib, subprocess, zipfile

ROOT = pathlib.Path(__file__).resolve().parent
SPEC = ROOT.parent / "tests" / "fixtures" / "spec"
SEEDS = ROOT / "seeds"
PROJECT = "--home-dev-app--"


def zstd(data: bytes) -> bytes:
    return subprocess.run(["zstd", "-q", "-c", "--no-check"], input=data, capture_output=True, check=True).stdout


def zstd_log(raw: bytes) -> bytes:
    header, _, rest = raw.partition(b"\n")
    out = zstd(header + b"\n")
    # One frame per line: DSH writes a frame per batch of lines.
    for line in rest.splitlines(keepends=True):
        out += zstd(line)
    return out


def write(target: str, name: str, data: bytes) -> None:
    folder = SEEDS / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data)


def uri(session_id: str) -> str:
    quoted = json.dumps(session_id, ensure_ascii=False, separators=(",", ":")).encode()
    return "dsh-session:" + base64.urlsafe_b64encode(quoted).decode().rstrip("=")


def main() -> None:
    logs = sorted(SPEC.glob("*.jsonl"))
    for path in logs:
        raw = path.read_bytes()
        stem = path.stem
        write("log_raw", stem, raw)
        write("log_zstd", stem, zstd_log(raw))
        # A torn tail: the last frame cut in half.
        whole = zstd_log(raw)
        write("log_zstd", stem + "-torn", whole[: len(whole) - 7])
        for n, line in enumerate(raw.splitlines()[:4]):
            write("json", f"{stem}-{n}", line)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for n, path in enumerate(logs[:6]):
            archive.writestr(f"{PROJECT}/s{n}/session.jsonl", path.read_bytes())
        archive.writestr("media/sha256:00.png", b"\x89PNG")
    write("zip_load", "root", buffer.getvalue())
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("session.jsonl", logs[0].read_bytes())
        archive.writestr("subagents/child/session.jsonl", logs[1].read_bytes())
    write("zip_load", "export", buffer.getvalue())
    write("zip_load", "zstd", zstd_log(logs[0].read_bytes()))
    entries = b"\xff".join(
        f"{PROJECT}/s{n}/session.jsonl".encode() + b"\0" + path.read_bytes() for n, path in enumerate(logs[:4])
    )
    write("entries_load", "root", entries)
    for n, session_id in enumerate(["s1", "4f0c-uuid", "数据库", "a\"b\\c", "\ud83d".encode("utf-16", "surrogatepass").decode("utf-16", "replace")]):
        write("uri", f"id{n}", uri(session_id).encode())
        write("mention", f"m{n}", f"see @[label {n}]({uri(session_id)}) and {uri('other')}.".encode())
    write("mention", "escaped", b"@[a\\]b](dsh-session:InMxIg) @[x](dsh-session:bad)")


if __name__ == "__main__":
    main()
