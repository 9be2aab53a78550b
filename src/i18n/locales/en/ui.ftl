# cudaenv's English words around messages: the printer's prefixes and the
# labels of `explain`'s and `doctor`'s reports, and the words of every finding (the source).

ui-error = error
ui-warning = warning
ui-hint = hint
ui-caused-by = caused by

explain-label-meaning = meaning:
explain-label-provided-by = provided by:
explain-label-installed = installed:
explain-not-recognised = cudaenv does not recognise this message
explain-not-recognised-hint = `cudaenv doctor` checks the whole setup; paste the first error line, not the traceback's last one

finding-level-ok = ok
finding-level-note = note
finding-level-warning = warning
finding-level-error = error
finding-label-fix = fix:
doctor-summary = { $errors ->
        [one] 1 error
       *[other] { $errors } errors
    }, { $warnings ->
        [one] 1 warning
       *[other] { $warnings } warnings
    }

# Names shared by several reports (explain, doctor, install notes).
ui-provider-file = { $provider } ({ $file })
ui-provider-driver = the NVIDIA driver
ui-provider-vc-runtime = the Microsoft Visual C++ runtime
ui-provider-unknown = an unknown package
ui-cudnn-rule-note = the rule of cuDNN { $family }; cudaenv's cuDNN table stops at { $row }

# `cudaenv help`.
ui-help-topics = Documentation (`cudaenv help TOPIC`):
ui-help-topic-in-english = {""}
ui-help-command-options = the options of the `{ $command }` command: `cudaenv { $command } --help`
