/* global document, EventSource, CSS */
// The dev inbox's only script (api/routes/dev/): the live list (server-sent
// events), local times and the width buttons. Rows arrive rendered and escaped
// by the server; this script only places them.
'use strict';

function localTimes(root) {
  for (const node of root.querySelectorAll('time[datetime]')) {
    const at = new Date(node.getAttribute('datetime'));
    if (!Number.isNaN(at.getTime())) {
      node.title = node.textContent;
      node.textContent = at.toLocaleString();
    }
  }
}

function liveList() {
  const list = document.getElementById('messages');
  const state = document.getElementById('live');
  const count = document.getElementById('count');
  if (!list || !state) return;
  const source = new EventSource(list.dataset.events);
  source.addEventListener('open', () => {
    state.dataset.state = 'live';
    state.textContent = 'live';
  });
  source.addEventListener('error', () => {
    // EventSource reconnects by itself (and sends Last-Event-ID: nothing is missed).
    state.dataset.state = 'reconnecting';
    state.textContent = 'reconnecting…';
  });
  source.addEventListener('mail', (event) => {
    const { id, row } = JSON.parse(event.data);
    const template = document.createElement('template');
    template.innerHTML = row;
    const element = template.content.firstElementChild;
    if (!element) return;
    localTimes(element);
    const existing = list.querySelector(`[data-id="${CSS.escape(id)}"]`);
    if (existing) {
      // Sent again after a reconnect: the same message, perhaps with a newer status.
      element.className = existing.className;
      existing.replaceWith(element);
    } else {
      element.classList.add('new');
      list.prepend(element);
      if (count) count.textContent = String(Number(count.textContent || '0') + 1);
    }
    document.getElementById('empty')?.remove();
  });
}

function widthButtons() {
  for (const button of document.querySelectorAll('button[data-width]')) {
    button.addEventListener('click', () => {
      const frame = document.getElementById(button.dataset.target);
      if (frame) frame.style.width = button.dataset.width;
    });
  }
}

localTimes(document);
liveList();
widthButtons();
