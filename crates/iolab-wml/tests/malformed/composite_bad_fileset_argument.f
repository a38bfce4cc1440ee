# expect: 6:35 unknown fileset `f2`
# hint: did you mean `f1`?
define file name=f1,path=/tmp,size=1m
define flowop name=rw, $fs
{
  flowop read name=r1,filesetname=$fs
}
define process name=p {
  thread name=t {
    flowop rw name=rw1, $fs=f2
  }
}
