# expect: 2:1 process has no threads
define process name=p {
}
