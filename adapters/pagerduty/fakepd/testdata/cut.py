import json,sys
def refs(o,acc):
    if isinstance(o,dict):
        for k,v in o.items():
            if k=='$ref' and isinstance(v,str): acc.add(v)
            else: refs(v,acc)
    elif isinstance(o,list):
        for v in o: refs(v,acc)
def get(d,ref):
    parts=ref[2:].split('/'); o=d
    for p in parts:
        p=p.replace('~1','/').replace('~0','~')
        o=o[int(p)] if isinstance(o,list) else o[p]
    return parts,o
def cut(d,paths,ops):
    out={'openapi':d['openapi'],'info':{'title':d['info']['title'],'version':d['info']['version']},'servers':d['servers'],'paths':{},'components':{}}
    for p in paths:
        item={k:v for k,v in d['paths'][p].items() if k in ops}
        out['paths'][p]=item
    todo=set(); refs(out['paths'],todo); seen=set()
    while todo:
        r=todo.pop()
        if r in seen: continue
        seen.add(r)
        parts,o=get(d,r)
        parts=parts[:3]; o=get(d,'#/'+'/'.join(parts))[1]
        cur=out
        for p in parts[:-1]: cur=cur.setdefault(p,{})
        cur[parts[-1]]=o
        refs(o,todo)
    return out
def strip(o,props=False):
    if isinstance(o,dict):
        if props: return {k:strip(v) for k,v in o.items()}
        return {k:strip(v,k=='properties') for k,v in o.items() if k not in('examples','example','x-examples') and not (k in ('description','summary') and isinstance(v,str) and len(v)>200)}
    if isinstance(o,list): return [strip(v) for v in o]
    return o
r=json.load(open('rest.json'))
rc=strip(cut(r,['/oncalls','/users/{id}'],['get','parameters']))
json.dump(rc,open('rest-oncalls.json','w'),indent=1,sort_keys=True)
e=json.load(open('ev2.json'))
ec=strip(cut(e,['/enqueue'],['post']))
json.dump(ec,open('events-v2.json','w'),indent=1,sort_keys=True)
