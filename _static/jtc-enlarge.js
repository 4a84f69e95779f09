// A click on a figure's image opens it alone, at its own size, over the page (jtc_utils.book.build.sphinx_ext); a click on one
// panel of a grid (jtc_utils.book.display.chapter.panels) opens the whole grid, its panels side by side at their own size, as the
// figure was drawn. A wide figure scrolls inside the overlay instead of being shrunk to the text column. On a screen
// narrower than an image, the image is drawn only as wide as its smallest text needs to stay READABLE_PX tall (its
// data-text-px, the digits' height in its own pixels), and never narrower than the screen: an enlarged grid on a phone
// was a column of panels each wider than the screen. Escape, a click beside the figure or the close button closes it.
(function () {
  var READABLE_PX = 8.5;  // jtc_utils.book.display.figure_layout.AIM_TEXT_PX
  function width(from) {
    var natural = from.naturalWidth, text = Number(from.dataset.textPx);
    var screen = document.documentElement.clientWidth - 32;  // the overlay's padding
    if (!natural || !(text > 0) || natural <= screen) return null;  // its own size
    return Math.min(natural, Math.max(screen, Math.ceil(READABLE_PX * natural / text)));
  }
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
    function copy(from) {
      var c = document.createElement('img');
      c.src = from.currentSrc || from.src;
      c.alt = from.alt;
      var w = width(from);
      if (w !== null) c.style.width = w + 'px';
      return c;
    }
    var panels = img.closest('div.jtc-panels');
    var big = copy(img);
    if (panels) {
      big = document.createElement('div');
      big.className = 'jtc-enlarged-panels';
      panels.querySelectorAll('img').forEach(function (p) { big.appendChild(copy(p)); });
    }
    box.appendChild(close);
    box.appendChild(big);
    function done() { box.remove(); document.removeEventListener('keydown', onKey); img.focus(); }
    function onKey(e) { if (e.key === 'Escape') done(); }
    box.addEventListener('click', function (e) { if (e.target.tagName !== 'IMG') done(); });
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
