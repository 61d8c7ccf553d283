// Real processes on a 2-core machine: one test at a time keeps the abort and shutdown bounds meaningful.
[assembly: CollectionBehavior(DisableTestParallelization = true)]
