// A click on a figure's image opens it alone, at its own size, over the page (jtc_utils.sphinx_ext); a wide
// multi-panel figure then scrolls inside the overlay instead of being shrunk to the text column. Escape, a click
// or the close button closes it.
(function () {
  function open(img) {
    var box = document.createElement('div');
    box.className = 'jtc-enlarged';
    box.setAttribute('role', 'dialog');
    box.setAttribute('aria-label', 'Figure at full size: ' + (img.alt || ''));
    var close = document.createElement('button');
    close.type = 'button';
    close.className = 'jtc-enlarged-close';
    close.setAttribute('aria-label', 'Close');
    close.textContent = '×';
    var big = document.createElement('img');
    big.src = img.currentSrc || img.src;
    big.alt = img.alt;
    box.appendChild(close);
    box.appendChild(big);
    function done() { box.remove(); document.removeEventListener('keydown', onKey); img.focus(); }
    function onKey(e) { if (e.key === 'Escape') done(); }
    box.addEventListener('click', function (e) { if (e.target !== big) done(); });
    close.addEventListener('click', done);
    document.addEventListener('keydown', onKey);
    document.body.appendChild(box);
    close.focus();
  }
  function init() {
    document.querySelectorAll('figure.jtc-figure img').forEach(function (img) {
      img.classList.add('jtc-enlargeable');
      img.tabIndex = 0;
      img.title = 'Click to see the figure at full size';
      img.addEventListener('click', function () { open(img); });
      img.addEventListener('keydown', function (e) { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); open(img); } });
    });
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init); else init();
})();
