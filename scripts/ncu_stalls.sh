#!/usr/bin/env bash
# ncu_stalls.sh: where one fused launch spends its time, by code region. Runs
# `fusedsample demo` under Nsight Compute's source counters (warp-stall
# sampling per SASS instruction) and writes $OUT/top_stalls.txt: the 45 most
# sampled instructions, then the samples, executed warp instructions and top
# stall reasons per 2 KiB block of code (mainloop, epilogue passes, producer
# and the final barrier show up as separate blocks), and $OUT/source_sass.csv.gz:
# every SASS instruction with its samples, stall reasons and execution counts.
#   scripts/ncu_stalls.sh SPEC TEMPERATURE [ROWS] [VOCAB] [HIDDEN]
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/build/devlibs:/usr/local/cuda/lib64
OUT=${OUT:-/tmp/fs-out}; mkdir -p "$OUT"
spec=${1:?spec}; t=${2:?temperature}; n=${3:-256}; vocab=${4:-151936}; hidden=${5:-4096}
timeout 200 ncu --clock-control none -k regex:fs_fused_kernel --launch-skip 1 --launch-count 1 --section SourceCounters \
  --section WarpStateStats -f -o /tmp/rep ./build/fusedsample demo --rows "$n" --vocab "$vocab" --hidden "$hidden" \
  --check-rows 0 --iters 2 --temperature "$t" --spec "$spec" > "$OUT/ncu_log.txt" 2>&1
ncu -i /tmp/rep.ncu-rep --page source --csv --print-source sass > /tmp/src.csv 2>&1
gzip -c /tmp/src.csv > "$OUT/source_sass.csv.gz"  # every SASS instruction with its samples and counts
python3 - "$OUT" <<'PY'
import csv,sys
rows=list(csv.reader(open('/tmp/src.csv')))
# find header row
hi=next(i for i,r in enumerate(rows) if any('Source' in c for c in r))
h=rows[hi]; data=rows[hi+1:]
col=[i for i,c in enumerate(h) if 'Warp Stall Sampling (All' in c]
src=[i for i,c in enumerate(h) if c=='Source'][0]
addr=[i for i,c in enumerate(h) if 'Address' in c]
c=col[0]
def num(x):
  try: return float(x.replace(',',''))
  except: return 0.0
tot=sum(num(r[c]) for r in data if len(r)>c)
top=sorted([r for r in data if len(r)>c], key=lambda r:-num(r[c]))[:45]
with open(sys.argv[1]+'/top_stalls.txt','w') as f:
  f.write('header: %s\ntotal samples %g\n'%(h[:12],tot))
  for r in top: f.write('%6.2f%%  %s  %s\n'%(100*num(r[c])/tot, r[addr[0]] if addr else '', r[src][:90]))
  # stall reason columns summed
  reasons=[(i,hh) for i,hh in enumerate(h) if hh.startswith('stall_') or 'Stall' in hh]
  base=min(int(r[addr[0]],16) for r in data if len(r)>c and r[addr[0]].startswith('0x'))
  buckets={}
  rs=[(i,hh) for i,hh in enumerate(h) if hh.startswith('stall_') and 'Not Issued' not in hh]
  for r in data:
    if len(r)<=c or not r[addr[0]].startswith('0x'): continue
    b=(int(r[addr[0]],16)-base)//0x800
    e=buckets.setdefault(b,[0.0,{} ,0.0])
    e[0]+=num(r[c]); e[2]+=num(r[h.index('Instructions Executed')]) if 'Instructions Executed' in h else 0
    for i,hh in rs: e[1][hh]=e[1].get(hh,0)+num(r[i])
  f.write('\nby 0x800 block of code (offset from kernel start): samples%%, warp instr executed, top reasons\n')
  for b in sorted(buckets):
    e=buckets[b]
    if e[0]/tot<0.005: continue
    top3=sorted(e[1].items(), key=lambda kv:-kv[1])[:4]
    f.write('%6x %6.2f%% %10d  %s\n'%(b*0x800,100*e[0]/tot,e[2],' '.join('%s=%.0f'%(k[6:],v) for k,v in top3)))
PY
grep -A80 'by 0x800' "$OUT/top_stalls.txt"
