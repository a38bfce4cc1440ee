# expect: 4:5 `run` needs a run time of at least 1 s, found -5
define file name=f1,path=/tmp,size=1m
define process name=p { thread name=t { flowop read name=r1,filesetname=f1 } }
run -5
