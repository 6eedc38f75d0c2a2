# brute-force: per-consumer ready barrier phase of consumer c's k-th half in ring R
import random
def phase_formula(k,R):
    return (k//2)&1 if R==2 else (52>>(k%6))&1
for R in (2,3):
    for c in (0,1):
        cnt={}
        for k in range(200):
            j,h=divmod(k,2); q=4*j+2*c+h; s=q%R
            n=cnt.get(s,0); cnt[s]=n+1
            assert (n&1)==phase_formula(k,R),(R,c,k)
print("formula ok")
# random-timing simulation of the protocol with mbarrier parity semantics
class Bar:
    def __init__(s): s.m=0  # completed phases
    def ok(s,P): return (s.m&1)!=P
def sim(R,units,seed):
    rnd=random.Random(seed)
    ready=[Bar() for _ in range(2*R)]; empty=[Bar() for _ in range(R)]
    buf=[None]*R
    halves=2*units
    # producer program: for q: if q>=R: wait empty[(q-R)%R] parity ((q-R)//R)&1, store; fill q (completes later)
    prod_q=0; prod_state='store' ; pending=[]  # pending fills (q, time)
    cons=[dict(k=0,state='wait') for _ in range(2)]
    stored=set(); t=0; order_turn=0
    seen=[]
    while True:
        t+=1
        acts=[]
        # complete pending fills randomly
        for f in list(pending):
            if rnd.random()<0.3:
                q=f; c=(q//2)%2; buf[q%R]=q; ready[c*R+q%R].m+=1; pending.remove(f)
        # producer
        if prod_q<halves:
            q=prod_q
            if q>=R:
                p=q-R
                if p not in stored:
                    if empty[p%R].ok((p//R)&1):
                        stored.add(p)
                if p in stored:
                    pending.append(q); prod_q+=1
            else:
                pending.append(q); prod_q+=1
        # consumers
        for c in (0,1):
            st=cons[c]; k=st['k']; j,h=divmod(k,2); u=2*j+c
            if u>=units: continue
            q=4*j+2*c+h; s=q%R
            if rnd.random()<0.5 and ready[c*R+s].ok(phase_formula(k,R)):
                assert buf[s]==q, ("alias",R,c,k,q,buf[s])
                empty[s].m+=1; st['k']+=1
        if all(2*((cons[c]['k'])//2)*1>=0 for c in (0,1)) and all((2*(cons[c]['k']//2)+c)>=units for c in (0,1)):
            break
        if t>100000: raise SystemExit("deadlock %s"%R)
    return True
for R in (2,3):
    for seed in range(300):
        for units in (1,2,3,5,8):
            sim(R,units,seed)
print("sim ok")
