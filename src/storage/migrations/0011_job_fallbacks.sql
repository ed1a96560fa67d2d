ALTER TABLE "media_jobs" ADD COLUMN "fallbacks" jsonb DEFAULT '[]'::jsonb NOT NULL;
