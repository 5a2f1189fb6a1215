"""Package hosting: a Kaiwu code package on disk (kaiwu_package), its aisrv side (package_aisrv), its learner side (trainee), the single-process trainer (local_trainer)."""
