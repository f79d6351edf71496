"""placeholder"""
SCENARIOS = {}
