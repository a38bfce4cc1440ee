# expect: 3:18 fileset `data` is already defined at 2:21
define fileset name=data,path=/tmp,entries=10,dirwidth=5
define file name=data,path=/tmp,size=1m
