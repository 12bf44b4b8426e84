"""The Annals CDK app: one stack per user (see infra/README.md).

`settings` is plain Python (no CDK import) so `annals deploy` and the tests can validate
input without aws-cdk-lib installed; `stack`, `wiring` and `nag` need aws-cdk-lib.
"""
