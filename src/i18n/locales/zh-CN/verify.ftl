# cudaenv 的 `verify` 中文消息：验证结论。

verify-verifying = 正在验证 `{ $name }` ……
verify-works = `{ $name }` 可以正常工作：所有检查都已通过，用时 { $seconds } 秒
verify-running-anyway = { $problem }；仍然继续检查（驱动现场编译期间，最初几次库调用可能要好几分钟）
