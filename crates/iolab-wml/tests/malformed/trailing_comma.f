# expect: 3:1 expected an attribute after `,`, found `define`
define fileset name=a,path=/tmp,entries=1,dirwidth=1,
define process name=p { thread name=t { flowop statfile name=s,filesetname=a } }
