"""Running the stages: inline in a background thread (local mode) or as Step Functions task Lambdas (AWS),
plus the wiring that builds the pipeline for a container and the log line per learned session.
"""
