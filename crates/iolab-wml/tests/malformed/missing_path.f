# expect: 2:1 `define fileset` needs `path`
define fileset name=a,entries=10,dirwidth=5
