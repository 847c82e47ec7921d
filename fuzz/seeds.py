"""Writes the seed corpora (fuzz/seeds/<target>/) from the small logs in tests/fixtures/spec:
raw logs, DSH-layout zstd logs (the header in its own frame), ZIP exports and persistence roots,
JSON lines, URIs, mentions, search requests, snapshot edits and cited texts. Run by `make fuzz-seeds`; needs python3 and the zstd CLI."""
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
        write("log_tape", stem, raw)
        write("log_transfer", stem, raw)
        # Segment edits as (position, xor) triples; a log's bytes also make a job to refuse.
        write("index_segment", stem, raw[:30])
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
    requests = [
        '{"query":"parser error"}',
        '{"query":"  fails\\u3000again ","limit":5,"highlights":true}',
        '{"query":"x","eventFilters":[{"kind":"surface","values":["current","shadowed"]}],"cursor":"abc"}',
        '{"sessionId":"s1","query":"deep","filters":[{"kind":"type","values":["user/message"]},{"kind":"seq","from":1}]}',
        '{"query":"a","sessionFilters":[{"kind":"cwd","values":["/w",null]},{"kind":"created-at","from":1,"to":9}],"limit":100}',
    ]
    for n, request in enumerate(requests):
        write("search_request", f"r{n}", request.encode())
    # Edits applied to a real snapshot: (kind, position, position, value) groups.
    for n, edits in enumerate([b"", b"\x00\x00\x10\x41", b"\x01\x00\x40\x00", b"\x02\x01\x00\x7b\x03\x00\x02\x00"]):
        write("snapshot_import", f"e{n}", edits)
    # A budget byte, then the cited session's messages, one per line.
    for n, text in enumerate([
        "\x05hello\nworld",
        "\x00</referenced-sessions><img src=x onerror=alert(1)>\n<<<>>>",
        "\x40" + "long line of text " * 200 + "\nsecond",
        "\x01\u6570\u636e\u5e93\n\ud83d\ude00 emoji \u0000 nul",
    ]):
        write("prepare_render", f"t{n}", text.encode("utf-8", "surrogatepass"))


if __name__ == "__main__":
    main()
