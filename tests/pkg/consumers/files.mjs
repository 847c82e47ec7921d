// Loads of the sample's logs as Files, shared by the load tests: the ZIP's stored entries, Files
// that count their reads, and what a load answers about its sessions.
import assert from 'node:assert/strict';

/** The entries of a ZIP whose entries are stored (the sample's are), from its central directory. */
export function storedEntries(zip) {
  const view = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
  let end = zip.byteLength - 22;
  while (view.getUint32(end, true) !== 0x06054b50) end--;
  const entries = [];
  for (let i = 0, at = view.getUint32(end + 16, true); i < view.getUint16(end + 10, true); i++) {
    assert.equal(view.getUint16(at + 10, true), 0, 'stored, not deflated');
    const nameLength = view.getUint16(at + 28, true);
    const name = new TextDecoder().decode(zip.subarray(at + 46, at + 46 + nameLength));
    const local = view.getUint32(at + 42, true);
    const data = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true);
    entries.push({ name, bytes: zip.subarray(data, data + view.getUint32(at + 20, true)) });
    at += 46 + nameLength + view.getUint16(at + 30, true) + view.getUint16(at + 32, true);
  }
  return entries;
}

/** Files that write every read of them to `events`: `whole` for their bytes, `head` for a slice. */
export function countingFiles(entries, events, broken = {}) {
  return entries.map(({ name, bytes }) => {
    const file = new File([bytes], name.split('/').pop());
    Object.defineProperty(file, 'webkitRelativePath', { value: `sample/${name}` });
    const slice = file.slice.bind(file);
    file.slice = (...args) => {
      events.push(['head', name]);
      return slice(...args);
    };
    file.arrayBuffer = async () => {
      events.push(['whole', name]);
      if (broken[name] === 'unreadable') throw new DOMException('the file changed on disk', 'NotReadableError');
      const whole = await File.prototype.arrayBuffer.call(file);
      return broken[name] === 'short' ? whole.slice(1) : whole;
    };
    return file;
  });
}

/** What a load answers about its sessions, wherever they were found. */
export function sessionsOf(report) {
  return report.sessions.map(({ input, path, ...rest }) => ({ path: path.replace(/^sample\//, ''), ...rest }));
}

export async function answers(archive, report) {
  const ids = report.sessions.map((s) => s.sessionId).sort();
  return {
    sessions: sessionsOf(report),
    failures: report.failures,
    listed: await archive.listSessions(),
    read: await Promise.all(ids.map((id) => archive.readSession(id))),
    search: await archive.searchSessions({ query: 'error' }),
  };
}
