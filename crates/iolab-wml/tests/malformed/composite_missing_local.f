# expect: 9:12 composite flowop `rw` needs `$fs`: it has no default
define file name=f1,path=/tmp,size=1m
define flowop name=rw, $fs
{
  flowop read name=r1,filesetname=$fs
}
define process name=p {
  thread name=t {
    flowop rw name=rw1, iters=2
  }
}
