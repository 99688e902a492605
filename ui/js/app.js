// app.js: the UI's start-up: the session check, the login page, the header (user, log out,
// which nav entry is current), then the router.  Page modules (jobs.js, dags.js) register
// their routes at import time; module scripts have all run before DOMContentLoaded.

import { api, ApiError, clear, getSession, h, loadAbilities, navigate, parseHash, route, setSession, startRouter, toast } from './core.js';

function showSession(s) {
	const box = document.getElementById('session');
	const user = document.getElementById('session-user');
	if (!box || !user) return;
	box.hidden = !s.user;
	user.textContent = s.user || '';
	const role = document.getElementById('session-role');
	if (role) {
		role.textContent = s.role ? `(${s.role})` : '';
		role.hidden = !s.role;
	}
}

function markNav(path) {
	for (const a of document.querySelectorAll('[data-nav]')) {
		const on = path === a.dataset.nav || path.startsWith(a.dataset.nav + '/');
		if (on) a.setAttribute('aria-current', 'page');
		else a.removeAttribute('aria-current');
	}
}

// Where to go after logging in: ?next= when it is one of our pages, else the jobs list.
function nextPage(query) {
	const n = query.next || '';
	return n.startsWith('/') && !n.startsWith('/login') ? n : '/jobs';
}

route('/login', (root, params, query) => {
	const err = h('p', { class: 'error', role: 'alert', 'data-testid': 'login-error', hidden: true });
	const user = h('input', { id: 'login-user', name: 'username', autocomplete: 'username', 'data-testid': 'login-user' });
	const pass = h('input', { id: 'login-password', name: 'password', type: 'password', autocomplete: 'current-password',
		'data-testid': 'login-password' });
	const token = h('input', { id: 'login-token', name: 'token', type: 'password', autocomplete: 'off', 'data-testid': 'login-token' });
	const submit = h('button', { type: 'submit', class: 'btn primary', 'data-testid': 'login-submit' }, 'Log in');
	let useToken = false;
	const userFields = h('div', { class: 'fields' },
		h('label', { for: 'login-user' }, 'User'), user,
		h('label', { for: 'login-password' }, 'Password'), pass);
	const tokenFields = h('div', { class: 'fields', hidden: true },
		h('label', { for: 'login-token' }, 'Server token'), token,
		h('p', { class: 'hint' }, 'The token is in the server\'s home, in the file "token".'));
	const switcher = h('button', { type: 'button', class: 'linkish', 'data-testid': 'login-switch' }, 'Use the server token instead');
	switcher.addEventListener('click', () => {
		useToken = !useToken;
		userFields.hidden = useToken;
		tokenFields.hidden = !useToken;
		switcher.textContent = useToken ? 'Use a user and password instead' : 'Use the server token instead';
		(useToken ? token : user).focus();
	});
	const form = h('form', { class: 'login', 'aria-labelledby': 'login-title', novalidate: true },
		h('h1', { id: 'login-title' }, 'Log in to weir'), userFields, tokenFields, err,
		h('div', { class: 'actions' }, submit, switcher));
	form.addEventListener('submit', async (e) => {
		e.preventDefault();
		err.hidden = true;
		const body = useToken ? { token: token.value.trim() } : { username: user.value.trim(), password: pass.value };
		if (useToken ? !body.token : !body.username || !body.password) {
			err.textContent = useToken ? 'Enter the server token.' : 'Enter a user and a password.';
			err.hidden = false;
			return;
		}
		submit.disabled = true;
		try {
			const s = await api('/ui/login', { method: 'POST', body });
			setSession(s);
			await loadAbilities();
			// the next page, unless the reader went elsewhere meanwhile
			if (parseHash().path === '/login')
				navigate(nextPage(query));
		} catch (ex) {
			err.textContent = ex instanceof ApiError && ex.status === 401
				? (useToken ? 'Wrong token.' : 'Wrong user or password.') + (ex.message && !/^HTTP /.test(ex.message) ? ' (' + ex.message + ')' : '')
				: 'Could not log in: ' + (ex.message || String(ex));
			err.hidden = false;
			pass.value = '';
			(useToken ? token : pass).focus();
		} finally {
			submit.disabled = false;
		}
	});
	root.appendChild(h('section', { class: 'page narrow' }, form));
	user.focus();
});

async function logout() {
	try {
		await api('/ui/logout', { method: 'POST' });
	} catch (e) {
		if (!(e instanceof ApiError && e.status === 401)) toast('Log out failed: ' + e.message, 'error');
	}
	setSession(null);
	navigate('/login');
}

async function start() {
	document.addEventListener('weir:session', (e) => showSession(e.detail));
	document.addEventListener('weir:route', (e) => markNav(e.detail.path));
	document.getElementById('logout').addEventListener('click', logout);
	try {
		setSession(await api('/ui/session'));
		await loadAbilities();
	} catch (e) {
		setSession(null);
		const { path } = parseHash();
		if (path !== '/login') {
			const here = location.hash.replace(/^#/, '');
			history.replaceState(null, '', '#/login' + (here && here !== '/' ? '?next=' + encodeURIComponent(here) : ''));
		}
	}
	showSession(getSession());
	startRouter(document.getElementById('main'));
}

// Not logged in and on a data page (e.g. after the session expired): the API client has
// already sent us to #/login; the page area is cleared so nothing stale stays visible.
document.addEventListener('weir:session', (e) => {
	if (!e.detail.user && parseHash().path !== '/login') clear(document.getElementById('main'));
});

// Module scripts run after parsing, when readyState is already 'interactive' but before
// DOMContentLoaded: waiting for the event is what lets the later page modules (jobs.js,
// dags.js) register their routes before the first dispatch.
if (document.readyState === 'complete') start();
else document.addEventListener('DOMContentLoaded', start);
