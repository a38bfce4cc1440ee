# expect: 3:27 flowop `wakeup` needs `target`
define process name=p {
  thread name=t2 { flowop wakeup name=w }
}
