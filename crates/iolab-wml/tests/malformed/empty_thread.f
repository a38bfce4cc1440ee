# expect: 3:3 thread has no flowops
define process name=p {
  thread name=t {
  }
}
