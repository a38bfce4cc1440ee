# expect: 2:41 `entries` must not be negative, found -5
define fileset name=a,path=/tmp,entries=-5,dirwidth=10
