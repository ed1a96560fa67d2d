-- What GATEWAY_SECRET the database is used with, without the secret: a verifier (an HMAC of a fixed label under a
-- key derived from the secret) written by the first process that opens the database, and compared by every later
-- process and CLI command, which refuse to start with another secret.
CREATE TABLE "secret_verifiers" (
	"name" text PRIMARY KEY NOT NULL,
	"verifier" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
