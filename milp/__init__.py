"""The exact time-indexed MILP (PROBLEM.md section 4): built as arrays, solved by HiGHS."""
