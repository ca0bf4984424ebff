"""AWS adapters: DynamoDB (PynamoDB), S3, OpenSearch."""
