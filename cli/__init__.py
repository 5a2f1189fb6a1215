"""The tools' command line: the flags several tools take (flags) and how a tool runs and ends
(run: one torch thread, bad input as exit code 2). The work behind the flags is the library's
(evaluation.session, export, tasks); a tool parses its flags, calls it and prints."""
