# expect: 5:1 unknown command `runn`
# hint: did you mean `run`?
define file name=f1,path=/tmp,size=1m
define process name=p { thread name=t { flowop read name=r1,filesetname=f1 } }
runn 60
