#!/bin/sh
# check_inputs.sh PIPER SOURCE_DIR WORK_DIR [--update]
# Reruns every `piper gen ... -o inputs/NAME.json` line of inputs/README.md
# into WORK_DIR and compares the bytes with the committed inputs/NAME.json.
# Fails if a file drifted, if a generated input has no command, or if the
# command list is empty.  With --update, rewrites the files in inputs/.
set -u
piper=$1
src=$2
work=$3
update=${4:-}
readme=$src/inputs/README.md
[ -f "$readme" ] || { echo "FAIL: $readme missing"; exit 1; }
rm -rf "$work" && mkdir -p "$work" || exit 1
grep '^piper gen ' "$readme" > "$work/commands" || { echo "FAIL: no 'piper gen' lines in $readme"; exit 1; }
status=0
while IFS= read -r line; do
  target=$(printf '%s\n' "$line" | sed -n 's|.* -o inputs/\([^ ]*\.json\).*|\1|p')
  if [ -z "$target" ]; then
    echo "FAIL: no '-o inputs/NAME.json' in: $line"
    status=1
    continue
  fi
  args=$(printf '%s\n' "$line" | sed -e 's|^piper gen ||' -e "s| -o inputs/$target||")
  # shellcheck disable=SC2086 # the README line is split into words on purpose
  if ! "$piper" gen $args -o "$work/$target"; then
    echo "FAIL: piper gen $args"
    status=1
    continue
  fi
  echo "$target" >> "$work/targets"
  if [ "$update" = "--update" ]; then
    cp "$work/$target" "$src/inputs/$target" || status=1
    echo "updated inputs/$target"
  elif ! cmp -s "$work/$target" "$src/inputs/$target"; then
    echo "FAIL: inputs/$target differs from: $line"
    status=1
  else
    echo "ok: inputs/$target"
  fi
done < "$work/commands"
for f in "$src"/inputs/*.json; do
  [ -e "$f" ] || continue
  name=$(basename "$f")
  if ! grep -qx "$name" "$work/targets" 2>/dev/null; then
    echo "FAIL: inputs/$name is not produced by any command in inputs/README.md"
    status=1
  fi
done
exit $status
