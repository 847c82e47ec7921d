// Reads a load input from disk as a user would: an export ZIP as one entry, a persistence root
// as every file under it with its path relative to the root. Uses node:fs (Node, Deno, Bun).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

export function readInputs(spec) {
  if (statSync(spec).isFile()) return [{ path: spec.split(sep).pop(), bytes: readFileSync(spec) }];
  const entries = [];
  const walk = (dir) => {
    for (const name of readdirSync(dir).sort()) {
      const full = join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else entries.push({ path: relative(spec, full).split(sep).join('/'), bytes: readFileSync(full) });
    }
  };
  walk(spec);
  return entries;
}
