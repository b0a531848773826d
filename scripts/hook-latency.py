#!/usr/bin/env python3
# The cost of a hook as an agent pays it: one coord process per event.
# Runs, alternating, coord --version (the floor: start and exit), the
# pre-edit hook with nothing held and the after-tool hook (a beat), 300
# times each in a fresh project, and prints wall and CPU medians. An
# optional second binary (an older coord) adds its --version for
# comparison. Usage: scripts/hook-latency.py [bin/coord [OLD_COORD]]
# HOOK_RUNS=N changes the 300; with COORD_BACKEND=nats://HOST:PORT/NS
# (a namespace not yet created) the project is on that hub instead.
import subprocess, time, statistics, resource, os, tempfile, json
import sys
B=sys.argv[1] if len(sys.argv) > 1 else 'bin/coord'
BEFORE=sys.argv[2] if len(sys.argv) > 2 else None
B=os.path.abspath(B)
env=dict(os.environ, COORD_AGENT='me')
d=tempfile.mkdtemp(prefix='coord-hook-latency.')
os.chdir(d)
subprocess.run([B,'init'],check=True,stdout=subprocess.DEVNULL,env=env)
subprocess.run([B,'seed-tasks','--stdin'],input=b'{"id":"ed","files":["src/editor/**"]}\n',check=True,stdout=subprocess.DEVNULL,env=env)
edit=json.dumps({"hook_event_name":"PreToolUse","cwd":d,"tool_name":"Edit","tool_input":{"file_path":d+"/src/editor/m.ts"}}).encode()
post=json.dumps({"hook_event_name":"PostToolUse","cwd":d,"tool_name":"Bash"}).encode()
cases={}
if BEFORE:
  cases['older coord --version']=([BEFORE,'--version'],None)
cases['coord --version']=([B,'--version'],None)
cases['hook PreToolUse (nothing held)']=([B,'hook','claude','PreToolUse'],edit)
cases['hook PostToolUse (beat)']=([B,'hook','claude','PostToolUse'],post)
res={k:[] for k in cases}; cpu={k:[] for k in cases}
for i in range(int(os.environ.get("HOOK_RUNS","300"))):
  for k,(argv,inp) in cases.items():
    r0=resource.getrusage(resource.RUSAGE_CHILDREN)
    t=time.perf_counter(); subprocess.run(argv,input=inp,stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL,env=env); d=time.perf_counter()-t
    r1=resource.getrusage(resource.RUSAGE_CHILDREN)
    res[k].append(d*1000); cpu[k].append((r1.ru_utime-r0.ru_utime+r1.ru_stime-r0.ru_stime)*1000)
for k in cases:
  print(f"{k:32s} wall median {statistics.median(res[k]):6.2f} ms  p10 {sorted(res[k])[30]:6.2f}  cpu median {statistics.median(cpu[k]):6.2f} ms")
