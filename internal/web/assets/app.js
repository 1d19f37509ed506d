// guide's web page: a live status line, and the paperclip's file widgets. Everything it
// does has a plain-form fallback; names and reasons only ever go in as text.
'use strict';
document.documentElement.classList.add('js');

function csrf() {
  const f = document.querySelector('input[name="csrf"]');
  return f ? f.value : '';
}

// The status line follows the server's events; EventSource reconnects by itself.
function followStatus() {
  const line = document.getElementById('status');
  if (!line || !window.EventSource) return;
  const es = new EventSource('/status/events');
  es.onmessage = (ev) => {
    let st;
    try { st = JSON.parse(ev.data); } catch { return; }
    line.dataset.state = st.state;
    line.querySelector('.docs').textContent = st.documents;
    line.querySelector('.detail').textContent = st.detail;
    let bar = line.querySelector('progress');
    if (st.total) {
      if (!bar) { bar = document.createElement('progress'); line.append(' ', bar); }
      bar.max = st.total; bar.value = st.applied;
    } else if (bar) {
      bar.remove();
    }
  };
  window.addEventListener('pagehide', () => es.close());
}

const list = () => document.getElementById('attachments');

function widgetFor(name) {
  for (const li of list().children) if (li.dataset.name === name) return li;
  return null;
}

// widget returns the file's widget, made when it has none: name, status and remove button.
function widget(name) {
  let li = widgetFor(name);
  if (li) return li;
  li = document.createElement('li');
  li.className = 'chip';
  li.dataset.name = name;
  const icon = document.createElement('span');
  icon.className = 'file-icon';
  icon.setAttribute('aria-hidden', 'true');
  const label = document.createElement('span');
  label.className = 'name';
  label.textContent = name;
  const state = document.createElement('span');
  state.className = 'state';
  const form = document.createElement('form');
  form.method = 'post';
  form.action = '/detach';
  form.className = 'detach';
  for (const [k, v] of [['csrf', csrf()], ['name', name], ['return', location.pathname + location.search]]) {
    const i = document.createElement('input');
    i.type = 'hidden'; i.name = k; i.value = v;
    form.append(i);
  }
  const x = document.createElement('button');
  x.type = 'submit';
  x.className = 'remove';
  x.textContent = '×';
  x.setAttribute('aria-label', 'Remove ' + name);
  x.title = 'Remove ' + name;
  form.append(x);
  li.append(icon, ' ', label, ' ', state, ' ', form);
  list().append(li);
  return li;
}

function setStatus(li, status, reason, href) {
  li.dataset.status = status;
  li.querySelector('.state').textContent = reason ? status + ': ' + reason : status;
  const label = li.querySelector('.name');
  if (status === 'ready' && href && label.tagName !== 'A') {
    const a = document.createElement('a');
    a.className = 'name';
    a.href = href;
    a.textContent = li.dataset.name;
    label.replaceWith(a);
  }
}

function upload(file) {
  const li = widget(file.name);
  setStatus(li, 'uploading');
  const max = Number(document.getElementById('attach-form').dataset.max || 0);
  if (max && file.size > max) {
    setStatus(li, 'failed', 'too large: ' + file.size.toLocaleString('en') + ' bytes; a session document may have at most ' + max.toLocaleString('en'));
    return;
  }
  const body = new FormData();
  body.append('files', file, file.name);
  const xhr = new XMLHttpRequest();
  xhr.open('POST', '/attach');
  xhr.setRequestHeader('X-CSRF-Token', csrf());
  xhr.setRequestHeader('Accept', 'application/json');
  // Sent: the server publishes it and waits for the index.
  xhr.upload.onload = () => setStatus(li, 'processing');
  xhr.onload = () => {
    let res;
    try { res = JSON.parse(xhr.responseText); } catch { res = null; }
    if (xhr.status !== 200 || !res || !res.files) {
      setStatus(li, 'failed', (res && res.error) || 'the server answered ' + xhr.status);
      return;
    }
    const f = res.files[0];
    setStatus(li, f.status, f.reason, f.href);
    if (f.status === 'processing') poll();
  };
  xhr.onerror = () => setStatus(li, 'failed', 'the upload did not reach the server');
  xhr.send(body);
}

// poll follows the widgets still processing until each is ready or failed.
let polling = false;
function poll() {
  if (polling) return;
  polling = true;
  const tick = async () => {
    let res;
    try {
      const r = await fetch('/attachments', { headers: { Accept: 'application/json' } });
      res = await r.json();
    } catch { res = null; }
    let waiting = false;
    if (res) {
      for (const f of res.files) {
        const li = widgetFor(f.filename);
        if (li && li.dataset.status !== 'uploading') setStatus(li, f.status, f.reason, f.href);
      }
    }
    for (const li of list().children) {
      if (li.dataset.status === 'processing' || li.dataset.status === 'uploading') waiting = true;
    }
    if (waiting) setTimeout(tick, 500); else polling = false;
  };
  setTimeout(tick, 300);
}

async function remove(form) {
  const li = form.closest('li');
  li.dataset.status = 'removing';
  li.querySelector('.state').textContent = 'removing';
  try {
    const r = await fetch('/detach', { method: 'POST', body: new FormData(form),
      headers: { Accept: 'application/json', 'X-CSRF-Token': csrf() } });
    if (r.ok) { li.remove(); return; }
    const res = await r.json().catch(() => ({}));
    setStatus(li, 'failed', res.error || 'could not remove it');
  } catch {
    setStatus(li, 'failed', 'could not reach the server');
  }
}

function setUpAttach() {
  const button = document.getElementById('attach-button');
  const input = document.getElementById('attach-input');
  if (!button || !input) return;
  button.addEventListener('click', () => input.click());
  input.addEventListener('change', () => {
    for (const f of input.files) upload(f);
    input.value = '';
  });
  list().addEventListener('submit', (ev) => {
    const form = ev.target.closest('form.detach');
    if (!form) return;
    ev.preventDefault();
    remove(form);
  });
  for (const li of list().children) {
    if (li.dataset.status === 'processing' || li.dataset.status === 'uploading') { poll(); break; }
  }
}

document.addEventListener('DOMContentLoaded', () => {
  followStatus();
  setUpAttach();
});
