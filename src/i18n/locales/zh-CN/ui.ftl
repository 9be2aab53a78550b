# cudaenv 的中文界面用语：输出前缀，`explain`、`doctor` 报告里的标签，以及各条检查结果（finding）的用语。

ui-error = 错误
ui-warning = 警告
ui-hint = 提示
ui-caused-by = 原因

explain-label-meaning = 含义：
explain-label-provided-by = 由谁提供：
explain-label-installed = 是否已安装：
explain-not-recognised = cudaenv 不认识这条消息
explain-not-recognised-hint = `cudaenv doctor` 会检查整套环境；请粘贴第一行错误，而不是 traceback 的最后一行

finding-level-ok = 正常
finding-level-note = 注意
finding-level-warning = 警告
finding-level-error = 错误
finding-label-fix = 解决办法：
doctor-summary = { $errors } 个错误，{ $warnings } 个警告

# 几个报告（explain、doctor、安装说明）共用的名称。
ui-provider-file = { $provider }（{ $file }）
ui-provider-driver = NVIDIA 驱动
ui-provider-vc-runtime = Microsoft Visual C++ 运行库
ui-provider-unknown = 某个未知的软件包
ui-cudnn-rule-note = 按 cuDNN { $family } 的规则；cudaenv 的 cuDNN 表只到 { $row }

# `cudaenv help`。
ui-help-topics = 文档（`cudaenv help 主题`）：
ui-help-topic-in-english = （英文）
ui-help-command-options = `{ $command }` 命令的选项：`cudaenv { $command } --help`
