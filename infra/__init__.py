"""Cairn's AWS CDK app: constructs per unit (infra/units), one stack per environment (infra/stack.py)."""
