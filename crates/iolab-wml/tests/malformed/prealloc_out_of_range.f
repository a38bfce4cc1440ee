# expect: 2:64 `prealloc` must be between 0 and 100, found 150
define fileset name=a,path=/tmp,entries=10,dirwidth=5,prealloc=150
