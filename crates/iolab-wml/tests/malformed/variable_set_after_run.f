# expect: 3:28 unknown variable `$dir`
# hint: after `run`
define fileset name=a,path=$dir,entries=1,dirwidth=1
run 10
set $dir=/tmp
