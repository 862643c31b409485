#!/bin/bash
# Writes a 1,000-row grid of small instances from the shipped inputs to standard output:
# 4 inputs x 10 memory sizes x 5 microbatch counts x 5 device budgets (2..32), 25 GiB/s.
# Rows differing only in devices form 200 groups.  usage: bench/make_grid_1000.sh > grid.tsv
here=$(cd "$(dirname "$0")/.." && pwd)
printf 'name\tinput\tdevices\tmemory\tbandwidth\tmicrobatches\tflags\n'
for input in bert-large-a100-40gb gpt3-1.3b-a100-80gb llama2-7b-h100-80gb llama2-7b-split-flash-h100-80gb; do
  for m in 4 8 12 16 20 24 32 40 64 80; do
    for n in 32 64 128 256 512; do
      for k in 2 4 8 16 32; do
        printf '%s-k%s-m%sGiB-n%s\t%s/inputs/%s.json\t%s\t%sGiB\t25GiB/s\t%s\tnone\n' "$input" "$k" "$m" "$n" \
          "$here" "$input" "$k" "$m" "$n"
      done
    done
  done
done
