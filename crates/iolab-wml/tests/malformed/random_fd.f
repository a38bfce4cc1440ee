# expect: 6:43 `fd` cannot be a random variable
define file name=f1,path=/tmp,size=1m
set $slot = randvar(type=uniform, min=1, mean=4)
define process name=p {
  thread name=t {
    flowop read name=r1,filesetname=f1,fd=$slot
  }
}
