#!/usr/bin/python3
"""Edge cases for shardc's ONNX decompositions, beyond ONNX's own backend tests.

Writes test cases in the backend-test layout (OUT/node/<case>/model.onnx and
test_data_set_0/{input,output}_N.pb) with reference outputs from numpy (and PyTorch for
GridSample, when installed), then runs shardc-onnx-conformance over them: every case must
import and pass.

Usage: /usr/bin/python3 tools/onnx-conformance/edge_cases.py --out DIR
                       [--runner BUILD/bin/shardc-onnx-conformance]
"""
import argparse
import itertools
import math
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import helper as h, numpy_helper as nh, TensorProto as TP
from onnx.backend.test.case.node.negativeloglikelihoodloss import (
    compute_negative_log_likelihood_loss as nll)
from onnx.backend.test.case.node.softmaxcrossentropy import softmaxcrossentropy as sce

parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
parser.add_argument('--out', required=True, help='folder to write the cases to (replaced)')
parser.add_argument('--runner', help='shardc-onnx-conformance to run over the cases')
args = parser.parse_args()
root = os.path.join(args.out, 'node')
shutil.rmtree(args.out, ignore_errors=True)
os.makedirs(root)
rng = np.random.default_rng(0)
np.seterr(all="ignore")  # the references meet inf, NaN and overflow on purpose
f32 = np.float32
count = 0


def case(name, op, inputs, outputs, attrs={}, opset=17, consts={}):
    """One node `op` with runtime `inputs` [(name, array)] and Constant inputs `consts`
    {name: array}; attrs['_order'] lists the node's inputs ('' for an omitted one)."""
    global count
    count += 1
    d = os.path.join(root, name)
    os.makedirs(d + '/test_data_set_0')
    attrs = dict(attrs)
    order = attrs.pop('_order', [n for n, _ in inputs] + list(consts))
    nodes = [h.make_node('Constant', [], [n], value=nh.from_array(a, n))
             for n, a in consts.items() if n]
    outs = ['out%d' % i for i in range(len(outputs))]
    nodes.append(h.make_node(op, order, outs, **attrs))
    elem = lambda a: onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.asarray(a).dtype]
    g = h.make_graph(nodes, name,
                     [h.make_tensor_value_info(n, elem(a), a.shape) for n, a in inputs],
                     [h.make_tensor_value_info(o, elem(a), np.asarray(a).shape)
                      for o, a in zip(outs, outputs)])
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid('', opset)]), d + '/model.onnx')
    for i, (_, a) in enumerate(inputs):
        with open(d + '/test_data_set_0/input_%d.pb' % i, 'wb') as f:
            f.write(nh.from_array(a).SerializeToString())
    for i, a in enumerate(outputs):
        with open(d + '/test_data_set_0/output_%d.pb' % i, 'wb') as f:
            f.write(nh.from_array(np.asarray(a)).SerializeToString())

# Elementwise ops, reductions, indexing, Einsum, losses, normalization.
# Round
x=np.array([-2.5,-1.5,-0.5,0.5,1.5,2.5,-0.49999997,0.49999997,-3.7,3.7,np.nan,np.inf,-np.inf,-0.0,8388609.0,4.5,-1e-30,1e30,0.5000001,-0.5000001],dtype=f32)
case('round', 'Round', [('x',x)], [np.round(x)])
xd=x.astype(np.float64); case('round_f64','Round',[('x',xd)],[np.round(xd)])
xh=x.astype(np.float16); case('round_f16','Round',[('x',xh)],[np.round(xh)])
# Mod ints
for dt in (np.int32,np.int64):
    a=rng.integers(-50,50,size=(4,5)).astype(dt); b=rng.integers(1,9,size=(5,)).astype(dt)*rng.choice([-1,1],size=(5,)).astype(dt)
    case('mod_%s'%dt.__name__,'Mod',[('a',a),('b',b)],[np.mod(a,b)])
    case('fmod_%s'%dt.__name__,'Mod',[('a',a),('b',b)],[np.fmod(a,b)],attrs={'fmod':1})
a=np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max, -7, 7, 0],dtype=np.int64); b=np.array([-1,-2,2,-2,-3],dtype=np.int64)
with np.errstate(all='ignore'):
    case('mod_extreme','Mod',[('a',a),('b',b)],[np.mod(a,b)])
# f16 fmod
a=(rng.standard_normal(200)*rng.choice([1e-4,1,100,60000],200)).astype(np.float16); b=(rng.standard_normal(200)*rng.choice([1e-4,1e-2,1,100],200)).astype(np.float16)
a[:5]=[0,-0.0,np.inf,5,-3]; b[:5]=[3,3,2,np.inf,-np.inf]
with np.errstate(all='ignore'):
    case('fmod_f16','Mod',[('a',a),('b',b)],[np.fmod(a,b)],attrs={'fmod':1})
# ArgMin/ArgMax select last
x=rng.integers(0,3,size=(3,4,5)).astype(f32)
for op,fn in (('ArgMax',np.argmax),('ArgMin',np.argmin)):
    for axis in (0,-1):
        for kd in (0,1):
            for last in (0,1):
                xr=np.flip(x,axis) if last else x
                r=fn(xr,axis=axis)
                if last: r=x.shape[axis]-1-r
                if kd: r=np.expand_dims(r,axis)
                case('%s_a%d_k%d_l%d'%(op,axis,kd,last),op,[('x',x)],[r.astype(np.int64)],attrs={'axis':axis,'keepdims':kd,'select_last_index':last})
xi=np.array([[np.iinfo(np.int64).min,5,np.iinfo(np.int64).max,np.iinfo(np.int64).min]],dtype=np.int64)
case('argmin_i64','ArgMin',[('x',xi)],[np.argmin(xi,axis=1).astype(np.int64)],attrs={'axis':1,'keepdims':0})
case('argmin_i64_last','ArgMin',[('x',xi)],[np.array([3],dtype=np.int64)],attrs={'axis':1,'keepdims':0,'select_last_index':1})
# CumSum
x=rng.standard_normal((3,7,2)).astype(f32)
for axis in (0,1,-1):
    for ex in (0,1):
        for rev in (0,1):
            xr=np.flip(x,axis) if rev else x
            r=np.cumsum(xr,axis=axis)
            if ex: r=r-xr
            if rev: r=np.flip(r,axis)
            case('cumsum_a%d_e%d_r%d'%(axis,ex,rev),'CumSum',[('x',x)],[r.astype(f32)],attrs={'exclusive':ex,'reverse':rev},consts={'axis':np.array(axis,dtype=np.int64)})
xi=rng.integers(-5,5,size=(9,)).astype(np.int32)
case('cumsum_i32','CumSum',[('x',xi)],[np.cumsum(xi).astype(np.int32)],consts={'axis':np.array(0,dtype=np.int32)})
xinf=np.array([1,np.inf,2,-np.inf,3],dtype=f32)
with np.errstate(all='ignore'):
    case('cumsum_inf','CumSum',[('x',xinf)],[np.cumsum(xinf)],consts={'axis':np.array(0,dtype=np.int64)})
# Pad
x=rng.standard_normal((2,3,4)).astype(f32)
for mode in ('constant','reflect','edge','wrap'):
    pads=np.array([1,5,2,0,7,3],dtype=np.int64)
    pw=[(pads[i],pads[i+3]) for i in range(3)]
    ref=np.pad(x,pw,mode=mode) if mode!='constant' else np.pad(x,pw,mode='constant',constant_values=1.5)
    cs={'pads':pads}
    if mode=='constant': cs['v']=np.array(1.5,dtype=f32)
    case('pad_'+mode,'Pad',[('x',x)],[ref],attrs={'mode':mode},consts=cs,opset=19 if mode=='wrap' else 13)
pads=np.array([-1,2,0,1,-2,3],dtype=np.int64)
xc=x[1:, :x.shape[1]-2, :]; ref=np.pad(xc,[(0,1),(2,0),(0,3)])
case('pad_negative','Pad',[('x',x)],[ref],consts={'pads':pads},opset=13)
ref=np.pad(x,[(0,0),(1,2),(0,0)],mode='edge')
case('pad_axes','Pad',[('x',x)],[ref],attrs={'mode':'edge'},consts={'pads':np.array([1,2],dtype=np.int64),'':None,'axes':np.array([-2],dtype=np.int64)},opset=18)
xv=rng.standard_normal((2,3)).astype(f32); v=np.array(-2.0,dtype=f32)
case('pad_runtime_value','Pad',[('x',xv),('v',v)],[np.pad(xv,[(1,0),(0,2)],constant_values=-2.0)],consts={'pads':np.array([1,0,0,2],dtype=np.int64)},attrs={'_order':['x','pads','v']},opset=13)
case('pad_opset2','Pad',[('x',xv)],[np.pad(xv,[(1,0),(0,2)],mode='reflect')],attrs={'mode':'reflect','pads':[1,0,0,2]},opset=2)
# GatherND
data=rng.standard_normal((2,3,4,5)).astype(f32)
idx=np.array([[[1,-1],[0,2]],[[2,3],[-3,0]]],dtype=np.int64)  # batch 2, 2 queries, k=2
ref=np.stack([np.stack([data[b][tuple(q)] for q in idx[b]]) for b in range(2)])
case('gathernd_b1','GatherND',[('d',data),('i',idx)],[ref],attrs={'batch_dims':1})
idx0=np.array([[1,2,3],[0,-1,-2]],dtype=np.int64)
ref0=np.stack([data[tuple(q)] for q in idx0])
case('gathernd_b0','GatherND',[('d',data),('i',idx0)],[ref0])
# GatherElements
data=rng.standard_normal((3,4,5)).astype(f32); idx=rng.integers(-4,4,size=(3,2,5)).astype(np.int32)
case('gatherel_a1','GatherElements',[('d',data),('i',idx)],[np.take_along_axis(data,np.where(idx<0,idx+4,idx),axis=1)],attrs={'axis':1})
idx=rng.integers(0,3,size=(2,4,3)).astype(np.int64)
case('gatherel_a0','GatherElements',[('d',data),('i',idx)],[np.take_along_axis(data[:,:,:3],idx,axis=0)],attrs={'axis':0})
# OneHot
ind=np.array([[0,3,-1],[-3,5,-4]],dtype=np.int64); depth=3; vals=np.array([2,7],dtype=np.int32)
def onehot(ind,depth,axis,vals):
    r=np.full(ind.shape+(depth,),vals[0],dtype=vals.dtype)
    for i in np.ndindex(ind.shape):
        k=ind[i]; k=k+depth if k<0 else k
        if 0<=k<depth: r[i+(k,)]=vals[1]
    return np.moveaxis(r,-1,axis)
for axis in (-1,0,1):
    case('onehot_a%d'%axis,'OneHot',[('i',ind),('v',vals)],[onehot(ind,depth,axis if axis>=0 else 2,vals)],attrs={'axis':axis,'_order':['i','depth','v']},consts={'depth':np.array([3.0],dtype=f32)},opset=11)
indf=np.array([0.7,2.2,-1.5],dtype=f32)
case('onehot_float','OneHot',[('i',indf),('v',vals)],[onehot(indf.astype(np.int64),3,1,vals)],attrs={'_order':['i','depth','v']},consts={'depth':np.array(3,dtype=np.int64)},opset=11)
# Einsum
def es(name,eq,*arrs):
    case('einsum_'+name,'Einsum',[('x%d'%i,a) for i,a in enumerate(arrs)],[np.einsum(eq,*arrs)],attrs={'equation':eq},opset=12)
A=rng.standard_normal((3,4)).astype(f32); B=rng.standard_normal((4,5)).astype(f32)
es('mm','ij,jk->ik',A,B)
es('mm_implicit','ij,jk',A,B)
es('outer','i,j->ij',A[0],B[0])
es('trace','ii',rng.standard_normal((4,4)).astype(f32))
es('diag','ii->i',rng.standard_normal((4,4)).astype(f32))
es('bt','bij,bkj->bik',rng.standard_normal((2,3,4)).astype(f32),rng.standard_normal((2,5,4)).astype(f32))
es('ell','...ij,jk->...ik',rng.standard_normal((2,3,3,4)).astype(f32),B)
es('ell2','...ij,...jk',rng.standard_normal((2,1,3,4)).astype(f32),rng.standard_normal((3,4,5)).astype(f32))
es('dot','ab,ab->',A,A)
es('perm','ijk->kji',rng.standard_normal((2,3,4)).astype(f32))
es('bcast','bij,bjk->bik',rng.standard_normal((1,3,4)).astype(f32),rng.standard_normal((3,4,5)).astype(f32))
es('sumall','ij->',A)
es('private','ijk,jl->il',rng.standard_normal((3,4,2)).astype(f32),rng.standard_normal((4,6)).astype(f32))
es('diag3','iij,jk->ik',rng.standard_normal((3,3,4)).astype(f32),B)
es('int','ij,jk->ik',rng.integers(-3,3,(3,4)).astype(np.int64),rng.integers(-3,3,(4,2)).astype(np.int64))
# Tile
x=rng.standard_normal((2,3)).astype(f32)
case('tile','Tile',[('x',x)],[np.tile(x,(3,2))],consts={'r':np.array([3,2],dtype=np.int64)})
case('tile0','Tile',[('x',x)],[np.tile(x,(1,0))],consts={'r':np.array([1,0],dtype=np.int64)})
# activations
x=np.array([-100,-20,-3,-1,-1e-3,0,1e-3,0.3,1,3,20,100,np.nan,np.inf,-np.inf],dtype=f32)
with np.errstate(all='ignore'):
    x64=x.astype(np.float64)
    case('softplus','Softplus',[('x',x)],[(np.log1p(np.exp(-np.abs(x64)))+np.maximum(x64,0)).astype(f32)])
    case('sign','Sign',[('x',x)],[np.sign(x)])
    case('sign_i','Sign',[('x',np.array([-3,0,4],dtype=np.int32))],[np.array([-1,0,1],dtype=np.int32)])
    case('isinf','IsInf',[('x',x)],[np.isinf(x)])
    case('isinf_pos','IsInf',[('x',x)],[np.isposinf(x)],attrs={'detect_negative':0})
    case('isinf_none','IsInf',[('x',x)],[np.zeros(x.shape,bool)],attrs={'detect_negative':0,'detect_positive':0})
    case('isnan','IsNaN',[('x',x)],[np.isnan(x)])
    case('ceil','Ceil',[('x',x)],[np.ceil(x)])
    case('elu','Elu',[('x',x)],[np.where(x<0,2.0*(np.exp(x)-1),x).astype(f32)],attrs={'alpha':2.0})
    case('selu','Selu',[('x',x)],[np.where(x>0,1.5*x,1.5*(0.7*np.exp(x)-0.7)).astype(f32)],attrs={'alpha':0.7,'gamma':1.5})
    case('celu','Celu',[('x',x)],[(np.maximum(0,x)+np.minimum(0,2.0*(np.exp(x/2.0)-1))).astype(f32)],attrs={'alpha':2.0})
    case('hardswish','HardSwish',[('x',x)],[(x*np.maximum(0,np.minimum(1,x/6+0.5))).astype(f32)])
    case('hardsigmoid','HardSigmoid',[('x',x)],[(np.maximum(0,np.minimum(1,x*0.3+0.1))).astype(f32)],attrs={'alpha':0.3,'beta':0.1})
    case('leaky','LeakyRelu',[('x',x)],[np.where(x<0,x*0.2,x).astype(f32)],attrs={'alpha':0.2})
    case('thr','ThresholdedRelu',[('x',x)],[np.where(x>0.3,x,0).astype(f32)],attrs={'alpha':0.3})
    case('softsign','Softsign',[('x',x)],[(x/(1+np.abs(x))).astype(f32)])
    case('shrink','Shrink',[('x',x)],[np.where(x<-1,x+0.5,np.where(x>1,x-0.5,0)).astype(f32)],attrs={'lambd':1.0,'bias':0.5})
# ReduceLogSumExp with infinities
x=np.array([[1,2,3],[-np.inf,-np.inf,-np.inf],[np.inf,1,2],[100,200,300]],dtype=f32)
with np.errstate(all='ignore'):
    r=np.log(np.sum(np.exp(x.astype(np.float64)-300),axis=1))+300
    r[0]=np.log(np.sum(np.exp(x[0].astype(np.float64)))); r[1]=-np.inf; r[2]=np.inf
case('lse','ReduceLogSumExp',[('x',x)],[r.astype(f32)],attrs={'axes':[1],'keepdims':0})
x=rng.standard_normal((3,4,5)).astype(f32)
case('l1','ReduceL1',[('x',x)],[np.sum(np.abs(x),axis=(0,2),keepdims=True)],attrs={'axes':[0,2]})
case('l2','ReduceL2',[('x',x)],[np.sqrt(np.sum(x*x,axis=(-1),keepdims=False))],attrs={'axes':[-1],'keepdims':0})
case('sumsq_all','ReduceSumSquare',[('x',x)],[np.sum(x*x,keepdims=True)])
# Hardmax
x=rng.integers(0,3,size=(2,3,4)).astype(f32)
def hardmax2d(m):
    r=np.zeros_like(m); r[np.arange(m.shape[0]),np.argmax(m,axis=1)]=1; return r
case('hardmax11_a1','Hardmax',[('x',x)],[hardmax2d(x.reshape(2,12)).reshape(2,3,4)],attrs={'axis':1},opset=11)
r=np.zeros_like(x); am=np.argmax(x,axis=1)
for i in range(2):
    for k in range(4): r[i,am[i,k],k]=1
case('hardmax13_a1','Hardmax',[('x',x)],[r],attrs={'axis':1},opset=13)
# NLL / SCE with weight and ignore_index in range
inp=rng.standard_normal((3,5,2)).astype(f32); tgt=rng.integers(0,5,size=(3,2)).astype(np.int64); tgt[0,0]=2; w=rng.random(5).astype(f32)
for red in ('mean','sum','none'):
    case('nll_w_ii_'+red,'NegativeLogLikelihoodLoss',[('i',inp),('t',tgt),('w',w)],[nll(inp,tgt,weight=w,reduction=red,ignore_index=2)],attrs={'reduction':red,'ignore_index':2},opset=13)
    case('sce_w_ii_'+red,'SoftmaxCrossEntropyLoss',[('i',inp),('t',tgt),('w',w)],list(sce(inp,tgt,weight=w,reduction=red,ignore_index=2,get_log_prob=True)),attrs={'reduction':red,'ignore_index':2},opset=13)
# NLL with -inf at another class
lp=np.log(np.array([[0.0,0.5,0.5],[1.0,0.0,0.0]],dtype=f32)); t=np.array([1,0],dtype=np.int64)
with np.errstate(all='ignore'):
    case('nll_neginf','NegativeLogLikelihoodLoss',[('i',lp),('t',t)],[np.array(-(lp[0,1]+lp[1,0])/2,dtype=f32)],opset=13)
# Trilu runtime k
x=rng.standard_normal((2,4,5)).astype(f32)
for k in (-2,0,3,7):
    case('triu_k%d'%k,'Trilu',[('x',x),('k',np.array(k,dtype=np.int64))],[np.triu(x,k)],opset=14)
    case('tril_k%d'%k,'Trilu',[('x',x),('k',np.array(k,dtype=np.int64))],[np.tril(x,k)],attrs={'upper':0},opset=14)
# EyeLike
case('eyelike','EyeLike',[('x',np.zeros((3,5),dtype=f32))],[np.eye(3,5,k=2,dtype=np.int32)],attrs={'k':2,'dtype':TP.INT32},opset=9)
case('eyelike_neg','EyeLike',[('x',np.zeros((4,3),dtype=np.int64))],[np.eye(4,3,k=-1,dtype=np.int64)],attrs={'k':-1},opset=9)
# legacy broadcast
a=rng.standard_normal((2,3,4,5)).astype(f32); b=rng.standard_normal((3,4)).astype(f32)
case('add_legacy_axis','Add',[('a',a),('b',b)],[a+b[None,:,:,None]],attrs={'broadcast':1,'axis':1},opset=6)
case('add_legacy_tail','Mul',[('a',a),('b',b[0,:1].repeat(5))],[a*b[0,:1].repeat(5)],attrs={'broadcast':1},opset=6)
# CastLike, Xor
case('castlike','CastLike',[('a',np.array([1.7,-2.2,3e9],dtype=f32)),('b',np.array([1],dtype=np.int64))],[np.array([1,-2,3000000000],dtype=np.int64)],opset=15)
p=np.array([True,False,True,False]); q=np.array([True,True,False,False])
case('xor','Xor',[('a',p),('b',q)],[p^q])
# DepthToSpace / SpaceToDepth
x=rng.standard_normal((1,8,2,3)).astype(f32)
b=2
tmp=x.reshape(1,b,b,2,2,3).transpose(0,3,4,1,5,2).reshape(1,2,4,6)
case('d2s_dcr','DepthToSpace',[('x',x)],[tmp],attrs={'blocksize':2})
tmp=x.reshape(1,2,b,b,2,3).transpose(0,1,4,2,5,3).reshape(1,2,4,6)
case('d2s_crd','DepthToSpace',[('x',x)],[tmp],attrs={'blocksize':2,'mode':'CRD'})
y=rng.standard_normal((1,2,4,6)).astype(f32)
tmp=y.reshape(1,2,2,2,3,2).transpose(0,3,5,1,2,4).reshape(1,8,2,3)
case('s2d','SpaceToDepth',[('x',y)],[tmp],attrs={'blocksize':2})
# PRelu opset 6 per-channel and int prelu
x=rng.standard_normal((2,3,4)).astype(f32); s=np.array([0.1,0.2,0.3],dtype=f32)
case('prelu6','PRelu',[('x',x),('s',s)],[np.where(x<0,x*s[None,:,None],x)],opset=6)
xs=rng.standard_normal((2,3,4)).astype(f32); s4=rng.standard_normal((4,)).astype(f32)
case('prelu16','PRelu',[('x',xs),('s',s4)],[np.where(xs<0,xs*s4,xs)],opset=16)
# LayerNorm stats double input
x=rng.standard_normal((2,3,4)).astype(np.float64); sc=rng.standard_normal((4,)).astype(np.float64)
mean=x.mean(-1,keepdims=True); var=((x-mean)**2).mean(-1,keepdims=True); inv=1/np.sqrt(var+1e-5)
case('ln_f64','LayerNormalization',[('x',x),('s',sc)],[((x-mean)*inv*sc),mean.astype(f32),inv.astype(f32)],opset=17)
case('ln_f64_stash11','LayerNormalization',[('x',x),('s',sc)],[((x-mean)*inv*sc),mean,inv],attrs={'stash_type':11},opset=17)


# ConvTranspose, ReduceProd, ReverseSequence, InstanceNormalization, LRN, 1-D Conv.
def convT(x,W,b,strides,pads,op,dil,group,out_shape=None,auto=None):
    N,C,H,Wd=x.shape; cg=C//group; fg=W.shape[1]; kh,kw=W.shape[2:]
    full=[strides[i]*(x.shape[2+i]-1)+op[i]+(W.shape[2+i]-1)*dil[i]+1 for i in range(2)]
    y=np.zeros((N,fg*group,full[0],full[1]),dtype=np.float64)
    for n in range(N):
      for c in range(C):
        g=c//cg
        for h in range(H):
          for w in range(Wd):
            for f in range(fg):
              for i in range(kh):
                for j in range(kw):
                  y[n,g*fg+f,h*strides[0]+i*dil[0],w*strides[1]+j*dil[1]]+=x[n,c,h,w]*W[c,f,i,j]
    pb,pe=[pads[0],pads[1]],[pads[2],pads[3]]
    if out_shape is not None:
        for i in range(2):
            tot=full[i]-out_shape[i]
            if tot<0: pb[i],pe[i]=0,tot
            elif auto=='SAME_UPPER': pb[i],pe[i]=tot//2,tot-tot//2
            else: pb[i],pe[i]=tot-tot//2,tot//2
    for i in range(2):
        if pe[i]<0:
            padw=[(0,0)]*4; padw[2+i]=(0,-pe[i]); y=np.pad(y,padw); pe[i]=0
    y=y[:,:,pb[0]:y.shape[2]-pe[0],pb[1]:y.shape[3]-pe[1]]
    if b is not None: y=y+b[None,:,None,None]
    return y.astype(f32)
cfgs=[dict(strides=[2,3],pads=[1,0,2,1],op=[1,2],dil=[1,2],group=1),
      dict(strides=[1,1],pads=[0,0,0,0],op=[0,0],dil=[1,1],group=2),
      dict(strides=[3,2],pads=[2,1,0,3],op=[2,0],dil=[2,1],group=2),
      dict(strides=[2,2],pads=[3,3,3,3],op=[0,0],dil=[1,1],group=1),
      dict(strides=[1,2],pads=[1,0,0,1],op=[1,1],dil=[2,1],group=1)]  # output_padding >= stride
for k,cf in enumerate(cfgs):
    x=rng.standard_normal((2,4,3,4)).astype(f32); W=rng.standard_normal((4,3,3,2)).astype(f32); b=rng.standard_normal(3*cf['group']).astype(f32)
    attrs={'strides':cf['strides'],'pads':cf['pads'],'output_padding':cf['op'],'dilations':cf['dil'],'group':cf['group']}
    case('convT_%d'%k,'ConvTranspose',[('x',x),('w',W),('b',b)],[convT(x,W,b,**cf)],attrs=attrs,opset=11)
x=rng.standard_normal((1,2,3,3)).astype(f32); W=rng.standard_normal((2,1,3,3)).astype(f32)
for auto in ('SAME_UPPER','SAME_LOWER'):
    case('convT_'+auto,'ConvTranspose',[('x',x),('w',W)],[convT(x,W,None,[2,2],[0,0,0,0],[0,0],[1,1],1,out_shape=[6,6],auto=auto)],attrs={'strides':[2,2],'auto_pad':auto},opset=11)
case('convT_outshape','ConvTranspose',[('x',x),('w',W)],[convT(x,W,None,[2,3],[0,0,0,0],[0,0],[1,1],1,out_shape=[5,10])],attrs={'strides':[2,3],'output_shape':[5,10]},opset=11)
# 1-D
x=rng.standard_normal((2,2,5)).astype(f32); W=rng.standard_normal((2,3,3)).astype(f32)
ref=convT(x[:,:,None,:],W[:,:,None,:],None,[1,2],[0,1,0,2],[0,1],[1,2],1)[:,:,0,:]
case('convT_1d','ConvTranspose',[('x',x),('w',W)],[ref],attrs={'strides':[2],'pads':[1,2],'output_padding':[1],'dilations':[2]},opset=11)
# ReduceProd
x=rng.standard_normal((3,5,7)).astype(f32)
case('prod_a12','ReduceProd',[('x',x)],[np.prod(x,axis=(1,2))],attrs={'axes':[1,-1],'keepdims':0},opset=13)
case('prod_all','ReduceProd',[('x',x)],[np.prod(x,keepdims=True)],opset=13)
xi=rng.integers(-3,4,(4,5)).astype(np.int64)
case('prod_int','ReduceProd',[('x',xi)],[np.prod(xi,axis=1,keepdims=True)],attrs={'axes':[1]},opset=13)
# ReverseSequence
x=rng.standard_normal((5,3,2)).astype(f32); L=np.array([5,1,3],dtype=np.int64)
ref=x.copy()
for b in range(3): ref[:L[b],b]=x[:L[b],b][::-1]
case('revseq_t0','ReverseSequence',[('x',x),('l',L)],[ref],opset=10)
xt=np.ascontiguousarray(x.transpose(1,0,2)); reft=np.ascontiguousarray(ref.transpose(1,0,2))
case('revseq_b0','ReverseSequence',[('x',xt),('l',L)],[reft],attrs={'batch_axis':0,'time_axis':1},opset=10)
# InstanceNorm 3-D input
x=rng.standard_normal((2,3,7)).astype(f32); s=rng.standard_normal(3).astype(f32); bb=rng.standard_normal(3).astype(f32)
m=x.mean(2,keepdims=True); v=x.var(2,keepdims=True)
case('instnorm_3d','InstanceNormalization',[('x',x),('s',s),('b',bb)],[(s[None,:,None]*(x-m)/np.sqrt(v+1e-5)+bb[None,:,None]).astype(f32)],opset=6)
# LRN even size
x=rng.standard_normal((2,6,3,3)).astype(f32); size=4
sq=np.zeros_like(x)
for c in range(6):
    sq[:,c]=np.sum(x[:,max(0,c-(size-1)//2):min(6,c+math.ceil((size-1)/2)+1)]**2,axis=1)
case('lrn_even','LRN',[('x',x)],[(x/(1.5+0.001/size*sq)**0.6).astype(f32)],attrs={'size':size,'alpha':0.001,'beta':0.6,'bias':1.5},opset=13)
# Conv1D autopad
x=rng.standard_normal((1,2,7)).astype(f32); W=rng.standard_normal((3,2,3)).astype(f32)
# SAME_UPPER stride 2: out=4, total=max((4-1)*2+3-7,0)=2 -> 1,1
xp=np.pad(x,[(0,0),(0,0),(1,1)])
ref=np.stack([np.einsum('ck,fck->f',xp[0,:,i*2:i*2+3],W) for i in range(4)],axis=-1)[None]
case('conv1d_same','Conv',[('x',x),('w',W)],[ref.astype(f32)],attrs={'auto_pad':'SAME_UPPER','strides':[2]},opset=11)


# 3-D windows, ceil_mode, 3-D ConvTranspose.
def pool_ref(x,k,s,pads,mode,dil=None,include=False,ceil=False):
    nd=len(k); dil=dil or [1]*nd
    N,C=x.shape[:2]; sp=x.shape[2:]
    outs=[]
    for i in range(nd):
        size=sp[i]+pads[i]+pads[i+nd]; ext=(k[i]-1)*dil[i]+1
        o=((size-ext+(s[i]-1 if ceil else 0))//s[i])+1
        outs.append(o)
    y=np.zeros((N,C)+tuple(outs))
    for o in itertools.product(*[range(v) for v in outs]):
        vals=[];cnt=0
        idxs=[]
        for kk in itertools.product(*[range(v) for v in k]):
            pos=[o[i]*s[i]+kk[i]*dil[i]-pads[i] for i in range(nd)]
            if all(0<=pos[i]<sp[i] for i in range(nd)): idxs.append(tuple(pos))
            elif all(-pads[i]<=pos[i]<sp[i]+pads[i+nd] for i in range(nd)): cnt+=1
        vals=np.stack([x[(slice(None),slice(None))+p] for p in idxs],-1)
        if mode=='max': y[(slice(None),slice(None))+o]=vals.max(-1)
        else: y[(slice(None),slice(None))+o]=vals.sum(-1)/(len(idxs)+(cnt if include else 0))
    return y.astype(f32)
def conv_ref(x,w,b,s,pads,dil,g):
    nd=w.ndim-2; N,C=x.shape[:2]; F=w.shape[0]; cg=C//g; fg=F//g
    xp=np.pad(x,[(0,0),(0,0)]+[(pads[i],pads[i+nd]) for i in range(nd)])
    outs=[(xp.shape[2+i]-((w.shape[2+i]-1)*dil[i]+1))//s[i]+1 for i in range(nd)]
    y=np.zeros((N,F)+tuple(outs))
    for o in itertools.product(*[range(v) for v in outs]):
        for f in range(F):
            gi=f//fg
            acc=0
            for kk in itertools.product(*[range(v) for v in w.shape[2:]]):
                pos=tuple(o[i]*s[i]+kk[i]*dil[i] for i in range(nd))
                acc=acc+np.einsum('nc,c->n',xp[(slice(None),slice(gi*cg,(gi+1)*cg))+pos],w[(f,slice(None))+kk])
            y[(slice(None),f)+o]=acc+(b[f] if b is not None else 0)
    return y.astype(f32)
x=rng.standard_normal((2,4,5,6,7)).astype(f32); w=rng.standard_normal((6,2,2,3,2)).astype(f32); b=rng.standard_normal(6).astype(f32)
case('conv3d_a','Conv',[('x',x),('w',w),('b',b)],[conv_ref(x,w,b,[2,1,3],[1,0,2,0,1,1],[1,2,1],2)],attrs={'strides':[2,1,3],'pads':[1,0,2,0,1,1],'dilations':[1,2,1],'group':2})
case('conv3d_same','Conv',[('x',x),('w',w)],[conv_ref(x,w,None,[2,2,2],[0,0,0,1,1,1],[1,1,1],2)],attrs={'strides':[2,2,2],'auto_pad':'SAME_UPPER','group':2})
for mode,op in (('max','MaxPool'),('avg','AveragePool')):
    x=rng.standard_normal((2,3,5,6,4)).astype(f32)
    case('pool3d_%s'%mode,op,[('x',x)],[pool_ref(x,[3,2,2],[2,1,2],[1,0,1,1,1,0],mode)],attrs={'kernel_shape':[3,2,2],'strides':[2,1,2],'pads':[1,0,1,1,1,0]})
    x2=rng.standard_normal((1,2,5,5)).astype(f32)
    case('pool2d_ceil_%s'%mode,op,[('x',x2)],[pool_ref(x2,[2,3],[2,2],[0,1,0,0],mode,ceil=True)],attrs={'kernel_shape':[2,3],'strides':[2,2],'pads':[0,1,0,0],'ceil_mode':1})
x=rng.standard_normal((2,3,5,6,4)).astype(f32)
case('pool3d_avg_incl','AveragePool',[('x',x)],[pool_ref(x,[3,2,2],[2,1,2],[1,0,1,1,1,0],'avg',include=True)],attrs={'kernel_shape':[3,2,2],'strides':[2,1,2],'pads':[1,0,1,1,1,0],'count_include_pad':1})
case('pool3d_max_dil','MaxPool',[('x',x)],[pool_ref(x,[2,2,2],[1,1,1],[0,0,0,0,0,0],'max',dil=[2,1,2])],attrs={'kernel_shape':[2,2,2],'dilations':[2,1,2]},opset=12)
x1=rng.standard_normal((2,3,9)).astype(f32)
case('pool1d_ceil','MaxPool',[('x',x1)],[pool_ref(x1,[3],[2],[1,0],'max',ceil=True)],attrs={'kernel_shape':[3],'strides':[2],'pads':[1,0],'ceil_mode':1},opset=12)
# ConvTranspose 3-D via direct scatter
def convT_nd(x,W,s,pads,op,dil,g):
    nd=W.ndim-2; N,C=x.shape[:2]; cg=C//g; fg=W.shape[1]
    full=[s[i]*(x.shape[2+i]-1)+op[i]+(W.shape[2+i]-1)*dil[i]+1 for i in range(nd)]
    y=np.zeros((N,fg*g)+tuple(full))
    for p in itertools.product(*[range(v) for v in x.shape[2:]]):
        for kk in itertools.product(*[range(v) for v in W.shape[2:]]):
            q=tuple(p[i]*s[i]+kk[i]*dil[i] for i in range(nd))
            for c in range(C):
                gi=c//cg
                y[(slice(None),slice(gi*fg,(gi+1)*fg))+q]+=np.outer(x[(slice(None),c)+p],W[(c,slice(None))+kk])
    sl=tuple(slice(pads[i],full[i]-pads[i+nd]) for i in range(nd))
    return y[(slice(None),slice(None))+sl].astype(f32)
x=rng.standard_normal((1,2,3,2,3)).astype(f32); W=rng.standard_normal((2,2,2,3,2)).astype(f32)
case('convT_3d','ConvTranspose',[('x',x),('w',W)],[convT_nd(x,W,[2,1,2],[1,0,0,0,1,1],[1,0,0],[1,2,1],2)],attrs={'strides':[2,1,2],'pads':[1,0,0,0,1,1],'output_padding':[1,0,0],'dilations':[1,2,1],'group':2},opset=11)


# RNN, GRU and LSTM: directions, sequence_lens, layout, activations.
sig=lambda v:1/(1+np.exp(-v)); acts={'Sigmoid':sig,'Tanh':np.tanh,'Relu':lambda v:np.maximum(v,0)}
def ref(cell,X,W,R,B=None,lens=None,h0=None,c0=None,P=None,direction='forward',lbr=0,actnames=None,layout=0):
    if layout: X=X.transpose(1,0,2); h0=None if h0 is None else h0.transpose(1,0,2); c0=None if c0 is None else c0.transpose(1,0,2)
    T,Bn,I=X.shape; D=W.shape[0]; H=R.shape[2]; G={'RNN':1,'GRU':3,'LSTM':4}[cell]
    nact={'RNN':1,'GRU':2,'LSTM':3}[cell]
    Y=np.zeros((T,D,Bn,H)); Yh=np.zeros((D,Bn,H)); Yc=np.zeros((D,Bn,H))
    L=lens if lens is not None else np.full(Bn,T)
    for d in range(D):
        f=[acts[a] for a in actnames[d*nact:(d+1)*nact]]
        w,r=W[d].astype(np.float64),R[d].astype(np.float64)
        b=B[d] if B is not None else np.zeros(2*G*H); wb,rb=b[:G*H],b[G*H:]
        p=P[d] if P is not None else np.zeros(3*H)
        rev = direction=='reverse' or d==1
        for bi in range(Bn):
            h=h0[d,bi].astype(np.float64) if h0 is not None else np.zeros(H)
            cc=c0[d,bi].astype(np.float64) if c0 is not None else np.zeros(H)
            order=range(L[bi]-1,-1,-1) if rev else range(L[bi])
            for t in order:
                x=X[t,bi]
                if cell=='RNN':
                    h=f[0](x@w.T+h@r.T+wb+rb)
                elif cell=='GRU':
                    xw=x@w.T+wb
                    z=f[0](xw[:H]+h@r[:H].T+rb[:H]); rr=f[0](xw[H:2*H]+h@r[H:2*H].T+rb[H:2*H])
                    if lbr: hh=f[1](xw[2*H:]+rr*(h@r[2*H:].T+rb[2*H:]))
                    else: hh=f[1](xw[2*H:]+(rr*h)@r[2*H:].T+rb[2*H:])
                    h=(1-z)*hh+z*h
                else:
                    g=x@w.T+wb+h@r.T+rb
                    i=f[0](g[:H]+p[:H]*cc); fg=f[0](g[2*H:3*H]+p[2*H:]*cc); ct=f[1](g[3*H:])
                    cc=fg*cc+i*ct; o=f[0](g[H:2*H]+p[H:2*H]*cc); h=o*f[2](cc)
                Y[t,d,bi]=h
            Yh[d,bi]=h; Yc[d,bi]=cc
    outs=[Y.astype(f32),Yh.astype(f32)]
    if cell=='LSTM': outs.append(Yc.astype(f32))
    if layout: outs=[outs[0].transpose(2,0,1,3)]+[o.transpose(1,0,2) for o in outs[1:]]
    return outs
def mk(cell,name,T=4,Bn=3,I=2,H=3,direction='forward',use_b=True,use_lens=False,use_h0=False,use_c0=False,use_p=False,lbr=0,actnames=None,layout=0):
    G={'RNN':1,'GRU':3,'LSTM':4}[cell]; D=2 if direction=='bidirectional' else 1
    X=rng.standard_normal((T,Bn,I)).astype(f32); W=rng.standard_normal((D,G*H,I)).astype(f32)*0.5; R=rng.standard_normal((D,G*H,H)).astype(f32)*0.5
    B=rng.standard_normal((D,2*G*H)).astype(f32) if use_b else None
    lens=np.array([T,1,T-1][:Bn],dtype=np.int32) if use_lens else None
    h0=rng.standard_normal((D,Bn,H)).astype(f32) if use_h0 else None
    c0=rng.standard_normal((D,Bn,H)).astype(f32) if use_c0 else None
    P=rng.standard_normal((D,3*H)).astype(f32) if use_p else None
    dflt={'RNN':['Tanh'],'GRU':['Sigmoid','Tanh'],'LSTM':['Sigmoid','Tanh','Tanh']}[cell]*D
    an=actnames or dflt
    Xin,h0in,c0in=X,h0,c0
    if layout:
        Xin=np.ascontiguousarray(X.transpose(1,0,2)); h0in=None if h0 is None else np.ascontiguousarray(h0.transpose(1,0,2)); c0in=None if c0 is None else np.ascontiguousarray(c0.transpose(1,0,2))
    outs=ref(cell,Xin,W,R,B,lens,h0in,c0in,P,direction,lbr,an,layout)
    ins=[('X',Xin),('W',W),('R',R)]; order=['X','W','R']
    for nm,v in (('B',B),('sequence_lens',lens),('initial_h',h0in),('initial_c',c0in),('P',P)):
        if cell!='LSTM' and nm in ('initial_c','P'): continue
        if v is not None: ins.append((nm,v)); order.append(nm)
        else: order.append('')
    while order[-1]=='': order.pop()
    attrs={'hidden_size':H,'direction':direction,'_order':order}
    if lbr: attrs['linear_before_reset']=1
    if actnames: attrs['activations']=actnames
    if layout: attrs['layout']=1
    case(name,cell,ins,outs,attrs=attrs,opset=14)
for cell in ('RNN','GRU','LSTM'):
    mk(cell,cell+'_fwd')
    mk(cell,cell+'_rev_lens',direction='reverse',use_lens=True,use_h0=True,use_c0=True)
    mk(cell,cell+'_bi_lens',direction='bidirectional',use_lens=True,use_h0=True,use_c0=True,use_p=True)
    mk(cell,cell+'_bi_layout',direction='bidirectional',use_h0=True,use_c0=True,layout=1,use_b=False)
mk('GRU','GRU_lbr',lbr=1,use_lens=True)
mk('GRU','GRU_lbr_bi_acts',lbr=1,direction='bidirectional',actnames=['Sigmoid','Relu','Tanh','Tanh'])
mk('LSTM','LSTM_acts',actnames=['Sigmoid','Relu','Tanh'],use_p=True)
mk('RNN','RNN_T1',T=1,use_lens=False)


# Integer and mixed-type Pow; training-mode BatchNormalization.
a=rng.integers(-5,6,(3,4)).astype(np.int64); e=rng.integers(0,40,(4,)).astype(np.int64)
with np.errstate(all='ignore'):
    case('pow_i64','Pow',[('a',a),('e',e)],[np.power(a,e)],opset=15)
    a32=a.astype(np.int32); e32=e.astype(np.int32)
    case('pow_i32','Pow',[('a',a32),('e',e32)],[np.power(a32,e32)],opset=15)
    case('pow_i32_i64','Pow',[('a',a32),('e',e)],[np.power(a32,e.astype(np.int32))],opset=15)
    case('pow_i64_const','Pow',[('a',a)],[np.power(a,np.array([0,3,1,2],dtype=np.int64))],consts={'e':np.array([0,3,1,2],dtype=np.int64)},opset=15)
    case('pow_i64_zero','Pow',[('a',a)],[np.power(a,np.int64(0))],consts={'e':np.array(0,dtype=np.int64)},opset=15)
    ef=np.array([0.5,2.0,3.3,1.0],dtype=f32); ap=np.abs(a)
    case('pow_i64_f32','Pow',[('a',ap),('e',ef)],[np.power(ap,ef).astype(np.int64)],opset=15)
    xh=rng.random((5,)).astype(np.float16); eh=np.array([0.1,0.3,2.5,1.7,0.9],dtype=f32)
    case('pow_f16_f32','Pow',[('a',xh),('e',eh)],[np.power(xh,eh).astype(np.float16)],opset=15)
# BatchNorm training
x=rng.standard_normal((2,3,4,5)).astype(f32); s=rng.standard_normal(3).astype(f32); b=rng.standard_normal(3).astype(f32); m=rng.standard_normal(3).astype(f32); v=rng.random(3).astype(f32)
bm=x.mean((0,2,3)); bv=x.var((0,2,3))
y=(s[None,:,None,None]*(x-bm[None,:,None,None])/np.sqrt(bv[None,:,None,None]+1e-2)+b[None,:,None,None]).astype(f32)
case('bn_train','BatchNormalization',[('x',x),('s',s),('b',b),('m',m),('v',v)],[y,(m*0.8+bm*0.2).astype(f32),(v*0.8+bv*0.2).astype(f32)],attrs={'training_mode':1,'momentum':0.8,'epsilon':1e-2},opset=15)


# MaxPool's Indices output.
def mp_ref(x,k,s,pads,dil,colmajor=False,ceil=False):
    N,C,H,W=x.shape
    outs=[]
    for i,sz in enumerate((H,W)):
        tot=sz+pads[i]+pads[i+2]; ext=(k[i]-1)*dil[i]+1
        outs.append((tot-ext+(s[i]-1 if ceil else 0))//s[i]+1)
    y=np.zeros((N,C)+tuple(outs),dtype=f32); ind=np.zeros((N,C)+tuple(outs),dtype=np.int64)
    for n in range(N):
      for c in range(C):
        for oh in range(outs[0]):
          for ow in range(outs[1]):
            best=None;bi=0
            for kh in range(k[0]):
              for kw in range(k[1]):
                h=oh*s[0]+kh*dil[0]-pads[0]; w=ow*s[1]+kw*dil[1]-pads[1]
                if 0<=h<H and 0<=w<W:
                  v=x[n,c,h,w]
                  if best is None or v>best: best=v; bi=(n*C+c)*H*W+(h+w*H if colmajor else h*W+w)
            y[n,c,oh,ow]=best; ind[n,c,oh,ow]=bi
    return y,ind
x=rng.integers(0,3,(2,2,6,7)).astype(f32)
for nm,k,s,p,d,cm,ce in [('a',[3,2],[2,1],[1,0,1,1],[1,2],False,False),('cm',[2,3],[1,2],[0,1,0,1],[1,1],True,False),('ceil',[3,3],[2,2],[0,0,0,0],[1,1],False,True)]:
    y,ind=mp_ref(x,k,s,p,d,cm,ce)
    case('mpidx_'+nm,'MaxPool',[('x',x)],[y,ind],attrs={'kernel_shape':k,'strides':s,'pads':p,'dilations':d,'storage_order':int(cm),'ceil_mode':int(ce)},opset=12)
x1=rng.integers(0,3,(2,3,9)).astype(f32)
y,ind=mp_ref(x1[:,:,None,:],[1,3],[1,2],[0,1,0,0],[1,1])
case('mpidx_1d','MaxPool',[('x',x1)],[y[:,:,0],ind[:,:,0]],attrs={'kernel_shape':[3],'strides':[2],'pads':[1,0]},opset=12)


# GridSample against PyTorch (skipped without torch).
try:
    import torch
except ImportError:
    torch = None
if torch is not None:
    x=rng.standard_normal((2,3,4,5)).astype(f32)
    g=(rng.standard_normal((2,3,6,2))*1.6).astype(f32)
    g[0,0,0]=[1.0,-1.0]; g[0,0,1]=[0.0,0.0]; g[0,0,2]=[-3.7,5.2]; g[1,2,5]=[-1.0, 1.0]
    for mode in ('bilinear','nearest','bicubic'):
        for pad in ('zeros','border','reflection'):
            for ac in (0,1):
                y=torch.nn.functional.grid_sample(torch.from_numpy(x),torch.from_numpy(g),mode=mode,padding_mode=pad,align_corners=bool(ac)).numpy()
                case('gs_%s_%s_%d'%(mode,pad,ac),'GridSample',[('x',x),('g',g)],[y],attrs={'mode':mode,'padding_mode':pad,'align_corners':ac},opset=16)
    # size-1 dims
    x1=rng.standard_normal((1,2,1,3)).astype(f32)
    for pad in ('zeros','border','reflection'):
      for ac in (0,1):
        y=torch.nn.functional.grid_sample(torch.from_numpy(x1),torch.from_numpy(g[:1]),mode='bilinear',padding_mode=pad,align_corners=bool(ac)).numpy()
        case('gs_h1_%s_%d'%(pad,ac),'GridSample',[('x',x1),('g',g[:1])],[y],attrs={'padding_mode':pad,'align_corners':ac},opset=16)


# DFT.
def pack(y,axis_sig):
    return np.stack((y.real,y.imag),axis=-1).astype(f32)
x=rng.standard_normal((2,6,5,1)).astype(f32)
case('dft_real_a2','DFT',[('x',x)],[pack(np.fft.fft(x[...,0],axis=2),2)],attrs={'axis':2},opset=17)
case('dft_real_neg','DFT',[('x',x)],[pack(np.fft.fft(x[...,0],axis=1),1)],attrs={'axis':-3},opset=17)
case('dft_onesided','DFT',[('x',x)],[pack(np.fft.rfft(x[...,0],axis=1),1)],attrs={'axis':1,'onesided':1},opset=17)
case('dft_len_pad','DFT',[('x',x)],[pack(np.fft.fft(x[...,0],n=9,axis=1),1)],attrs={'axis':1},consts={'n':np.array(9,dtype=np.int64)},opset=17)
case('dft_len_trunc','DFT',[('x',x)],[pack(np.fft.fft(x[...,0],n=4,axis=2),2)],attrs={'axis':2},consts={'n':np.array(4,dtype=np.int64)},opset=17)
xc=rng.standard_normal((2,7,3,2)).astype(f32); z=xc[...,0]+1j*xc[...,1]
case('dft_complex','DFT',[('x',xc)],[pack(np.fft.fft(z,axis=1),1)],attrs={'axis':1},opset=17)
case('dft_complex_inv','DFT',[('x',xc)],[pack(np.fft.ifft(z,axis=2),2)],attrs={'axis':2,'inverse':1},opset=17)
xd=rng.standard_normal((1,8,1)).astype(np.float64)
case('dft_f64_inv_real','DFT',[('x',xd)],[np.stack((np.fft.ifft(xd[...,0],axis=1).real,np.fft.ifft(xd[...,0],axis=1).imag),-1)],attrs={'inverse':1},opset=17)

# ScatterElements, ScatterND, MaxUnpool.
def scatter_el(data, idx, upd, axis, add):
    out = data.copy()
    for pos in np.ndindex(idx.shape):
        tgt = list(pos)
        tgt[axis] = idx[pos] % data.shape[axis]
        out[tuple(tgt)] = out[tuple(tgt)] + upd[pos] if add else upd[pos]
    return out
data = rng.standard_normal((3, 5, 2)).astype(f32)
idx = np.array([[[0, 4]], [[-1, 2]], [[3, -5]]], dtype=np.int64)
upd = rng.standard_normal((3, 1, 2)).astype(f32)
case('scatterel_a1', 'ScatterElements', [('d', data), ('i', idx), ('u', upd)],
     [scatter_el(data, idx, upd, 1, False)], attrs={'axis': 1}, opset=16)
dup = np.array([[[1, 1]], [[1, 1]], [[0, 0]]], dtype=np.int32)
case('scatterel_add_dup', 'ScatterElements', [('d', data), ('i', dup), ('u', upd)],
     [scatter_el(data, dup, upd, 1, True)], attrs={'axis': -2, 'reduction': 'add'}, opset=16)
di = rng.integers(-9, 9, (4, 3)).astype(np.int32)
ii = np.array([[3, 0, 1]], dtype=np.int64)
ui = rng.integers(-9, 9, (1, 3)).astype(np.int32)
case('scatterel_int', 'ScatterElements', [('d', di), ('i', ii), ('u', ui)],
     [scatter_el(di, ii, ui, 0, False)], opset=13)
db = rng.random((2, 4)) > 0.5
ub = np.array([[True, False]])
ib = np.array([[3, 0]], dtype=np.int64)
case('scatterel_bool', 'ScatterElements', [('d', db), ('i', ib), ('u', ub)],
     [scatter_el(db, ib, ub, 1, False)], attrs={'axis': 1}, opset=13)
def scatter_nd(data, idx, upd, add):
    out = data.copy()
    for pos in np.ndindex(idx.shape[:-1]):
        tgt = tuple(int(v) for v in idx[pos])
        out[tgt] = out[tgt] + upd[pos] if add else upd[pos]
    return out
data = rng.standard_normal((4, 3, 2)).astype(f32)
idx = np.array([[[1, 2]], [[-1, 0]], [[1, 2]]], dtype=np.int64)
upd = rng.standard_normal((3, 1, 2)).astype(f32)
case('scatternd_slices_add', 'ScatterND', [('d', data), ('i', idx), ('u', upd)],
     [scatter_nd(data, idx, upd, True)], attrs={'reduction': 'add'}, opset=16)
idx1 = np.array([[2], [0]], dtype=np.int64)
upd1 = rng.standard_normal((2, 3, 2)).astype(f32)
case('scatternd_rows', 'ScatterND', [('d', data), ('i', idx1), ('u', upd1)],
     [scatter_nd(data, idx1, upd1, False)], opset=13)
# MaxUnpool after an overlapping MaxPool (k 3, stride 2): repeated indices keep the value.
x = rng.integers(0, 5, (1, 2, 7, 6)).astype(f32)
y, ind = mp_ref(x, [3, 3], [2, 2], [0, 0, 0, 0], [1, 1])
ref = np.zeros((1, 2, 7, 6), f32).reshape(-1)
ref[ind.reshape(-1)] = y.reshape(-1)
case('maxunpool_overlap', 'MaxUnpool', [('x', y), ('i', ind)], [ref.reshape(1, 2, 7, 6)],
     attrs={'kernel_shape': [3, 3], 'strides': [2, 2]}, consts={'s': np.array([1, 2, 7, 6], np.int64)},
     opset=11)

# Slice with negative steps (torch.flip exports starts -1, ends -(2^63 - 1), steps -1), by the
# spec's clamping: starts to [0, d-1], ends to [-1, d-1]; mixed with a positive step.
def onnx_slice(x, starts, ends, axes, steps):
    index = [slice(None)] * x.ndim
    for st, en, ax, sp in zip(starts, ends, axes, steps):
        d = x.shape[ax]
        st = st + d if st < 0 else st
        en = en + d if en < 0 else en
        lo, hi = (0, d) if sp > 0 else (0, d - 1)
        st = min(max(st, lo), hi)
        en = min(max(en, lo if sp > 0 else -1), hi)
        index[ax] = list(range(st, en, sp))
    out = x
    for ax, ix in enumerate(index):
        if isinstance(ix, list):
            out = np.take(out, np.array(ix, np.int64), axis=ax)
    return out
big = np.iinfo(np.int64).max
x = rng.standard_normal((5, 6, 4)).astype(f32)
for name, st, en, ax, sp in [
        ('flip', [-1], [-big], [1], [-1]),
        ('flip_two', [-1, -1], [-big, -big], [0, 2], [-1, -1]),
        ('step_m2', [4], [0], [1], [-2]),
        ('step_m3_from_end', [-2], [-6], [1], [-3]),
        ('start_past_end', [10], [1], [0], [-1]),
        ('start_before_begin', [-10], [-big], [1], [-1]),
        ('end_is_last', [3], [-1], [1], [-1]),
        ('empty', [1], [3], [1], [-1]),
        ('mixed', [0, 5], [5, -big], [0, 1], [2, -2]),
        ('step_min', [3], [-big], [2], [-big - 1])]:
    ins = {'starts': np.array(st, np.int64), 'ends': np.array(en, np.int64),
           'axes': np.array(ax, np.int64), 'steps': np.array(sp, np.int64)}
    case('slice_negstep_' + name, 'Slice', [('x', x)], [onnx_slice(x, st, en, ax, sp)],
         consts=ins, opset=13)
ints = rng.integers(-9, 9, (3, 5)).astype(np.int64)
case('slice_negstep_i64', 'Slice', [('x', ints)], [ints[:, ::-1]], opset=13,
     consts={'starts': np.array([-1], np.int64), 'ends': np.array([-big], np.int64),
             'axes': np.array([1], np.int64), 'steps': np.array([-1], np.int64)})


print('%d cases in %s' % (count, root))
if args.runner:
    sys.exit(subprocess.call([args.runner, '--data', args.out, '--suite', 'node',
                              '--min-pass', str(count)]))
