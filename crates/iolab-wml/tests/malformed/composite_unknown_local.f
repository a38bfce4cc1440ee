# expect: 10:25 composite flowop `rw` has no local variable `$fss`
# hint: did you mean `$fs`?
define file name=f1,path=/tmp,size=1m
define flowop name=rw, $fs=f1
{
  flowop read name=r1,filesetname=$fs
}
define process name=p {
  thread name=t {
    flowop rw name=rw1, $fss=f1
  }
}
