#!/usr/bin/env bash
# The WIT a built component carries must be the checked-in one: the `session-search`
# interface, as `wasm-tools component wit` prints it from both, is the same text (the
# component carries no doc comments, so they are set aside), and the component's world
# exports it.
#   tests/component/check-wit.sh COMPONENT.wasm WIT_DIR
set -euo pipefail
component="${1:?usage: check-wit.sh COMPONENT.wasm WIT_DIR}"
wit_dir="${2:?usage: check-wit.sh COMPONENT.wasm WIT_DIR}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# The `interface session-search { … }` block, unindented (the component prints its
# packages nested, so indentation differs), without doc comments.
interface_block() {
  awk '
    !open && /^ *interface session-search \{$/ { open = 1; match($0, /^ */); indent = RLENGTH }
    open && !/^ *\/\/\// { print substr($0, indent + 1) }
    open && $0 ~ ("^" sprintf("%" indent "s", "") "}$") { exit }
  ' "$1"
}

wasm-tools component wit "$wit_dir" > "$tmp/checked-in.wit"
wasm-tools component wit "$component" > "$tmp/built.wit"
interface_block "$tmp/checked-in.wit" > "$tmp/checked-in.interface"
interface_block "$tmp/built.wit" > "$tmp/built.interface"
[[ -s "$tmp/checked-in.interface" ]] || { echo "check-wit: no interface session-search in $wit_dir" >&2; exit 1; }
if ! diff -u "$tmp/checked-in.interface" "$tmp/built.interface"; then
  echo "check-wit: the component's WIT differs from $wit_dir (diff above: checked-in, built)" >&2
  exit 1
fi
grep -q '^ *export dsh:session-search/session-search@0\.1\.0;$' "$tmp/built.wit" || {
  echo "check-wit: the component's world does not export dsh:session-search/session-search@0.1.0" >&2
  exit 1
}
echo "check-wit: $component carries wit/'s interface ($(wc -l < "$tmp/built.interface") lines)"
