# expect: 6:41 unknown fileset `nosuch`
set $fs=nosuch
define fileset name=real,path=/tmp,entries=1,dirwidth=1
define process name=p {
  thread name=t {
    flowop openfile name=o1,filesetname=$fs
  }
}
