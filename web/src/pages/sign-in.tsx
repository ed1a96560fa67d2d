import { useState } from 'preact/hooks';
import { request } from '../api.ts';
import { ErrorText, messageOf } from '../components/feedback.tsx';
import { Link } from '../router.tsx';
import type { Account } from '../types.ts';

interface SignInProps {
  mode: 'sign-in' | 'sign-up';
  notice?: string;
  onSignedIn: (account: Account) => void;
}

/** Sign-in and sign-up: both answer with the session cookie, which is all the dashboard keeps. */
export function SignInPage({ mode, notice, onSignedIn }: SignInProps) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const signUp = mode === 'sign-up';

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const answer = await request<{ account: Account }>(
        'POST',
        signUp ? '/api/v1/auth/signup' : '/api/v1/auth/login',
        { email, password },
      );
      onSignedIn(answer.account);
    } catch (caught) {
      setError(messageOf(caught));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main" class="auth">
      <h1 tabIndex={-1}>{signUp ? 'Create an account' : 'Sign in'}</h1>
      {notice ? <p class="notice">{notice}</p> : null}
      <form onSubmit={submit} class="stack">
        <label>
          Email
          <input
            type="email"
            name="email"
            autoComplete="email"
            required
            value={email}
            onInput={(event) => setEmail(event.currentTarget.value)}
          />
        </label>
        <label>
          Password
          <input
            type="password"
            name="password"
            autoComplete={signUp ? 'new-password' : 'current-password'}
            required
            minLength={8}
            value={password}
            onInput={(event) => setPassword(event.currentTarget.value)}
          />
        </label>
        {signUp ? <p class="muted">At least 8 characters.</p> : null}
        <ErrorText message={error} />
        <button type="submit" class="primary" disabled={busy}>
          {signUp ? 'Create account' : 'Sign in'}
        </button>
      </form>
      <p>
        {signUp ? (
          <>
            Already have an account? <Link href="/sign-in">Sign in</Link>
          </>
        ) : (
          <>
            New here? <Link href="/sign-up">Create an account</Link>
          </>
        )}
      </p>
    </main>
  );
}
